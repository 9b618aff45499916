"""Monte-Carlo gradients: E[(x + s z)^2] = x^2 + s^2 with z ~ N(0, 1), whose gradient is 2x;
the pathwise estimate within 4.5 exact standard errors (2s/sqrt(S)), its reported standard
errors against the exact ones, antithetic pairs (exact for the linear part), the score-function
estimator against its exact variance, seeds (64 bits) and point0."""
import numpy as np
import pytest


PATHWISE = "input x\nparam s\noutput f = (x + s*normal())^2\n"
SCORE = "input x\nparam s\noutput f = normal(x, s)^2\n"


@pytest.fixture
def points(rng):
    B = 64
    return rng.uniform(-2, 2, size=(B, 1)), rng.uniform(0.2, 1.5, size=(B, 1))


def test_pathwise_gradient_within_standard_errors(ctx, points):
    x, s = points
    S = 1024
    prog = ctx.compile(PATHWISE, name="sq")
    assert prog.n_draws == 1
    r = prog.sgrad(x, s, samples=S, seed=7)
    assert r.f.shape == (64,) and r.g.shape == (64, 1) and r.se.shape == (64, 1)
    assert not r.status.any()
    se_exact = 2 * s / np.sqrt(S)  # per-sample gradient 2(x + s z): standard deviation 2s
    assert np.all(np.abs(r.g - 2 * x) <= 4.5 * se_exact)
    f_sd = np.sqrt(4 * x ** 2 * s ** 2 + 2 * s ** 4)  # sd of (x + s z)^2
    assert np.all(np.abs(r.f - (x ** 2 + s ** 2)[:, 0]) <= 4.5 * f_sd[:, 0] / np.sqrt(S))
    np.testing.assert_allclose(r.se, se_exact, rtol=0.15)  # sample sd: relative error ~2%


def test_antithetic_pairs_cancel_the_linear_part(ctx, points):
    x, s = points
    r = ctx.compile(PATHWISE).sgrad(x, s, samples=64, seed=3, antithetic=True)
    np.testing.assert_allclose(r.g, 2 * x, rtol=1e-13, atol=1e-13)  # (2(x+sz) + 2(x-sz))/2
    assert np.all(r.se < 1e-12)


def test_score_function_estimator(ctx, rng):
    B, S = 16, 16384
    x = rng.uniform(-1, 1, size=(B, 1))
    s = rng.uniform(0.5, 1.0, size=(B, 1))
    r = ctx.compile(SCORE, name="score").sgrad(x, s, samples=S, seed=11, score=True)
    # per sample f * (xi - x) / s^2 with xi = x + s z: mean 2x and
    # E[.^2] = E[(x + s z)^4 z^2] / s^2 = (x^4 + 18 x^2 s^2 + 15 s^4) / s^2
    var = (x ** 4 + 18 * x ** 2 * s ** 2 + 15 * s ** 4) / s ** 2 - 4 * x ** 2
    se_exact = np.sqrt(var / S)
    assert np.all(np.abs(r.g - 2 * x) <= 4.5 * se_exact)
    np.testing.assert_allclose(r.se, se_exact, rtol=0.2)


def test_seeds_and_point0(ctx, points):
    x, s = points
    prog = ctx.compile(PATHWISE)
    a = prog.sgrad(x, s, samples=32, seed=5)
    b = prog.sgrad(x, s, samples=32, seed=5)
    c = prog.sgrad(x, s, samples=32, seed=6)
    np.testing.assert_array_equal(a.g, b.g)
    assert not np.array_equal(a.g, c.g)
    np.testing.assert_array_equal(prog.sgrad(x, s, samples=32, seed=2 ** 64 - 1).g,
                                  prog.sgrad(x, s, samples=32, seed=-1).g)
    with pytest.raises(ValueError):
        prog.sgrad(x, s, samples=32, seed=2 ** 64)
    # a batch cut into two calls keeps its draws when the second starts at point0 = 40
    first = prog.sgrad(x[:40], s[:40], samples=32, seed=5)
    second = prog.sgrad(x[40:], s[40:], samples=32, seed=5, point0=40)
    np.testing.assert_array_equal(np.concatenate([first.g, second.g]), a.g)
    shifted = prog.sgrad(x[40:], s[40:], samples=32, seed=5)
    assert not np.array_equal(shifted.g, a.g[40:])
