"""The state path classifier's numbers: the closeness view, the stored vectors, the fit.

`closeness` places a sentence by its nearest labelled examples (the best cosine to each
label's examples and the mean of the best `NEAREST`); `pack` and `unpack` keep the examples'
unit vectors as int8 with a scale per row, so they ship beside the weights at a quarter of the
size; `fit` is a multinomial logistic regression with an L2 penalty, fitted by L-BFGS.
`context.intents` builds its classifier from them.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.optimize import minimize

# How many of a label's nearest examples the closeness view averages.
NEAREST = 3


def closeness(
    rows: npt.NDArray[np.float32],
    vectors: npt.NDArray[np.float32],
    targets: npt.NDArray[np.int_],
    labels: int,
    leave_out: bool = False,
) -> npt.NDArray[np.float32]:
    """Per label, the best cosine of `rows` to its examples (`vectors`, labelled `targets`) and
    the mean of the best `NEAREST`; `leave_out`: `rows` are the examples themselves, each kept
    off its own list."""
    out = np.zeros((len(rows), 2 * labels), dtype=np.float32)
    for start in range(0, len(rows), 1024):  # blocks: the examples' full matrix is ~100 MB
        block = rows[start : start + 1024] @ vectors.T
        if leave_out:
            block[np.arange(len(block)), np.arange(start, start + len(block))] = -1.0
        for label in range(labels):
            near = block[:, targets == label]
            k = min(NEAREST, near.shape[1])
            if k == 0:
                continue
            best = -np.partition(-near, k - 1, axis=1)[:, :k]
            out[start : start + len(block), 2 * label] = best.max(axis=1)
            out[start : start + len(block), 2 * label + 1] = best.mean(axis=1)
    return out


def pack(vectors: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """Unit vectors as int8 with a scale per row: a quarter of the size, cosines within 1%."""
    scales = np.abs(vectors).max(axis=1) / 127.0
    scales = np.where(scales == 0, 1.0, scales).astype(np.float32)
    return np.round(vectors / scales[:, None]).astype(np.int8), scales


def unpack(
    packed: npt.NDArray[np.int8], scales: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    return packed.astype(np.float32) * scales[:, None]


def fit(
    x: npt.NDArray[np.float64], y: npt.NDArray[np.int_], classes: int, c: float
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Multinomial logistic regression with an L2 penalty, fitted by L-BFGS."""
    n, d = x.shape
    rows = np.arange(n)

    def loss(flat: npt.NDArray[np.float64]) -> tuple[float, npt.NDArray[np.float64]]:
        w = flat[: d * classes].reshape(d, classes)
        b = flat[d * classes :]
        z = x @ w + b
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        value = -np.log(p[rows, y] + 1e-12).sum() / n + (w * w).sum() / (2 * c * n)
        p[rows, y] -= 1.0
        grad_w = x.T @ p / n + w / (c * n)
        return float(value), np.concatenate([grad_w.ravel(), p.sum(axis=0) / n])

    start = np.zeros(d * classes + classes)
    found = minimize(loss, start, jac=True, method="L-BFGS-B", options={"maxiter": 500})
    flat = found.x
    return flat[: d * classes].reshape(d, classes), flat[d * classes :]
