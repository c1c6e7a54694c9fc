"""Polarisation scores (1-component PCA), spurious-direction removal, polarisation accuracy,
and the packaged sentence-transformers model."""

from __future__ import annotations

import numpy as np
import pytest

from rankbias.metrics.duo import (
    polarisation_accuracy,
    polarisation_scores,
    spurious_direction,
)
from rankbias.models import embed_texts

DIMENSIONS = 32


def clustered(rng, n_per_side, separation, noise, axis):
    labels = np.repeat([1, 2], n_per_side)
    signs = np.where(labels == 1, 1.0, -1.0)
    points = rng.normal(scale=noise, size=(2 * n_per_side, DIMENSIONS))
    points += np.outer(signs * separation, axis) + rng.normal(size=DIMENSIONS)
    return points, labels


def unit(index):
    vector = np.zeros(DIMENSIONS)
    vector[index] = 1.0
    return vector


def test_pca_on_two_clusters_recovers_the_perspectives():
    rng = np.random.default_rng(0)
    axis = rng.normal(size=DIMENSIONS)
    axis /= np.linalg.norm(axis)
    embeddings, labels = clustered(rng, 8, separation=1.0, noise=0.05, axis=axis)
    scores = polarisation_scores(embeddings)
    assert polarisation_accuracy(scores, labels) == 1.0
    # the scores are projections on (±) the planted axis, centred on the fit mean
    centred = (embeddings - embeddings.mean(axis=0)) @ axis
    assert abs(np.corrcoef(scores, centred)[0, 1]) > 0.999


def test_fit_set_defines_the_axis_and_the_ranked_documents_are_projected():
    rng = np.random.default_rng(1)
    fit, _ = clustered(rng, 10, separation=1.0, noise=0.05, axis=unit(0))
    ranked = fit.mean(axis=0) + np.outer([2.0, -1.0, 0.5], unit(0))
    scores = polarisation_scores(ranked, fit_embeddings=fit)
    # the fitted axis is ±e0; largest loading positive -> +e0; projections of the ranked docs
    assert scores == pytest.approx([2.0, -1.0, 0.5], abs=0.02)


def test_sign_convention_largest_loading_positive():
    points = np.outer([-3.0, -1.0, 1.0, 3.0], -unit(2))  # axis along e2, written negatively
    scores = polarisation_scores(points)
    # the axis is made +e2, so the point with the largest e2 coordinate scores highest
    assert scores == pytest.approx([3.0, 1.0, -1.0, -3.0])


def test_agrees_with_scikit_learn_pca():
    import sklearn.decomposition as decomposition

    rng = np.random.default_rng(2)
    fit, ranked = rng.normal(size=(15, 8)), rng.normal(size=(6, 8))
    reference = decomposition.PCA(n_components=1, svd_solver="full").fit(fit).transform(ranked)
    assert polarisation_scores(ranked, fit) == pytest.approx(reference.ravel(), abs=1e-10)


def test_removing_a_planted_spurious_direction():
    rng = np.random.default_rng(3)
    n = 20
    labels = np.repeat([1, 2], n // 2)
    perspective = np.where(labels == 1, 1.0, -1.0)
    # style (e.g. legal language) is independent of the perspective and varies more than it
    style = rng.permutation(np.repeat([1.0, -1.0], n // 2))
    embeddings = (
        np.outer(perspective, unit(0))
        + np.outer(3.0 * style, unit(1))
        + rng.normal(scale=0.05, size=(n, DIMENSIONS))
    )
    assert polarisation_accuracy(polarisation_scores(embeddings), labels) < 0.8
    # distractors: same style split, no perspective content
    distractor_a = np.outer(np.full(6, 3.0), unit(1)) + rng.normal(scale=0.05, size=(6, DIMENSIONS))
    distractor_b = np.outer(np.full(6, -3.0), unit(1)) + rng.normal(
        scale=0.05, size=(6, DIMENSIONS)
    )
    direction = spurious_direction(distractor_a, distractor_b)
    assert np.linalg.norm(direction) == pytest.approx(1.0)
    assert abs(direction @ unit(1)) > 0.99
    cleaned = polarisation_scores(embeddings, remove_direction=direction)
    assert polarisation_accuracy(cleaned, labels) == 1.0


def test_spurious_direction_is_the_normalised_mean_difference():
    a = np.array([[2.0, 0.0], [4.0, 2.0]])
    b = np.array([[0.0, 0.0], [0.0, 2.0]])
    assert spurious_direction(a, b) == pytest.approx([1.0, 0.0])
    with pytest.raises(ValueError, match="identical mean"):
        spurious_direction(a, a)


def test_polarisation_accuracy_hand_examples():
    assert polarisation_accuracy([1.0, 2.0, -1.0, -3.0], ["a", "a", "b", "b"]) == 1.0
    assert polarisation_accuracy([1.0, 2.0, -1.0, -3.0], ["b", "b", "a", "a"]) == 1.0
    assert polarisation_accuracy([1.0, -2.0, 1.0, -3.0], ["a", "a", "b", "b"]) == 0.5
    assert polarisation_accuracy([0.0, 2.0, -1.0, -3.0], [1, 1, 2, 2]) == 0.75  # 0 is wrong
    assert polarisation_accuracy([2.0, 1.0, -1.0, 0.0], [1, 1, 2, 2]) == 0.75  # in either group
    # one perspective only: the better sign is the one most scores have
    assert polarisation_accuracy([1.0, -1.0, 2.0], ["a", "a", "a"]) == pytest.approx(2 / 3)
    # all positive: the best sign assignment gets one group right; the released per-group
    # majority counts both groups as right
    assert polarisation_accuracy([1.0, 2.0, 3.0, 4.0], [1, 1, 2, 2]) == 0.5
    assert (
        polarisation_accuracy([1.0, 2.0, 3.0, 4.0], [1, 1, 2, 2], method="per_group_majority")
        == 1.0
    )
    with pytest.raises(ValueError, match="at most two perspectives"):
        polarisation_accuracy([1.0, 2.0, 3.0], [1, 2, 3])


def test_per_group_majority_counts_each_group_within_itself():
    labels = ["a", "a", "a", "b", "b", "b"]
    # a: 2 positive, 1 negative → 2; b: 1 positive, 2 negative → 2; best sign a+ b−: 2 + 2
    opposite = [1.0, 1.0, -1.0, 1.0, -1.0, -1.0]
    assert polarisation_accuracy(opposite, labels, method="per_group_majority") == 4 / 6
    assert polarisation_accuracy(opposite, labels) == 4 / 6
    # both groups mostly positive: each majority counts (2 + 2), one sign assignment 2 + 1
    same = [1.0, 1.0, -1.0, 1.0, 1.0, -1.0]
    assert polarisation_accuracy(same, labels, method="per_group_majority") == 4 / 6
    assert polarisation_accuracy(same, labels) == 3 / 6
    with pytest.raises(ValueError, match="method: expected"):
        polarisation_accuracy(same, labels, method="majority")


def test_spurious_direction_refuses_empty_or_non_finite_distractors():
    good = np.array([[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match=r"distractor_a: expected a 2-D array .*\(0, 2\)"):
        spurious_direction(np.zeros((0, 2)), good)
    with pytest.raises(ValueError, match="distractor_b: expected finite numbers"):
        spurious_direction(good, np.array([[np.nan, 0.0]]))


def test_bad_embeddings():
    with pytest.raises(ValueError, match="2-D"):
        polarisation_scores(np.zeros(5))
    with pytest.raises(ValueError, match="identical"):
        polarisation_scores(np.ones((4, 3)))
    with pytest.raises(ValueError, match="dimensions"):
        polarisation_scores(np.eye(3), fit_embeddings=np.eye(4))


def test_packaged_model_embeds_offline():
    sentences = [
        "Nuclear power is a safe source of low-carbon electricity.",
        "Nuclear energy provides reliable electricity with low carbon emissions.",
        "The recipe calls for two cups of flour and a pinch of salt.",
    ]
    vectors = embed_texts(sentences)
    assert vectors.shape == (3, 384)
    assert np.linalg.norm(vectors, axis=1) == pytest.approx(np.ones(3), abs=1e-3)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > similarity[0, 2] + 0.3


def test_every_refusal_of_the_polarisation_functions_is_whole():
    cases = [
        (lambda: spurious_direction(np.eye(2), np.eye(3)),
         "distractor_a has 2 dimensions, distractor_b 3; expected the same embedding space"),
        (lambda: spurious_direction(np.eye(2), np.eye(2)[::-1]),
         "distractor sets have identical mean embeddings: no spurious direction"),
        (lambda: polarisation_scores(np.eye(3), fit_embeddings=np.eye(4)),
         "fit_embeddings have 4 dimensions, embeddings 3; expected the same embedding space"),
        (lambda: polarisation_scores(np.eye(3), fit_embeddings=[[0.0, np.inf, 1.0]] * 2),
         "fit_embeddings: expected finite numbers, found NaN or inf"),
        (lambda: polarisation_scores(np.eye(3), remove_direction=[1.0, 0.0]),
         "remove_direction has 2 dimensions, embeddings 3; expected the same"),
        (lambda: polarisation_scores(np.eye(3), remove_direction=[0.0, 0.0, 0.0]),
         "remove_direction is the zero vector; expected a direction"),
        (lambda: polarisation_scores(np.eye(3), fit_embeddings=[[1.0, 2.0, 3.0]]),
         "fit set: expected at least 2 documents for PCA, found 1"),
        (lambda: polarisation_scores(np.ones((4, 3))),
         "fit set: all embeddings are identical, the principal axis is undefined"),
        (lambda: polarisation_accuracy([1.0, -1.0, 2.0], ["a", "b"]),
         "labels: expected one label per score (3), found shape (2,)"),
        (lambda: polarisation_accuracy([1.0, -1.0], ["a", "b"], method="majority"),
         "method: expected one of 'best_sign', 'per_group_majority', found 'majority'"),
    ]  # fmt: skip
    for call, message in cases:
        with pytest.raises(ValueError) as error:
            call()
        assert str(error.value) == message


def test_a_direction_of_any_length_is_removed_whole():
    # the documents differ along x (±2, ±1) and, far more, along z; removing z (given with
    # length 2) leaves the x axis: the scores are the x coordinates (mean 0)
    embeddings = np.array([[2.0, 0.0, 50.0], [-2.0, 0.0, -30.0], [1.0, 0.0, 90.0], [-1.0, 0, 0]])
    scores = polarisation_scores(embeddings, remove_direction=[0.0, 0.0, 2.0])
    np.testing.assert_allclose(scores, [2.0, -2.0, 1.0, -1.0], atol=1e-12)


def test_accuracy_counts_a_zero_score_as_neither_sign():
    # 0.5 is positive and right for "a" in either assignment; 0.0 is right under neither
    labels = ["a", "a", "b", "b"]
    assert polarisation_accuracy([0.5, 0.0, -0.5, -2.0], labels) == 0.75
    assert polarisation_accuracy([0.5, 0.0, -0.5, -2.0], labels, method="per_group_majority") == (
        0.75
    )
    assert polarisation_accuracy([0.5, 0.25, 0.75, -2.0], labels) == 0.75
