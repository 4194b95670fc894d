"""The ``joint_gibbs`` route: several metrics' posterior by data augmentation, vectorised over pairs and chains.

It decides the pairs whose ``joint_importance`` weights stay too uneven
(:mod:`~prefeval_core.decision.joint_importance`), and its sweeps build that route's proposal
(:func:`conditional_parameters`).

The model (:mod:`~prefeval_core.decision.joint`) is conditionally conjugate. With the latent true
outcomes of the unrevealed items, ``L[c, h]`` = items of pattern ``c`` whose truth is ``h``
(``sum_h L[c, h] = u_c``), ``S = sum_c L[c]`` and ``L_j[c', h] = sum_{c: c_j = c'} L[c, h]``, the
Gibbs sampler alternates exactly

    L[c] | p, mu ~ Multinomial(u_c, normalise(p * prod_j mu_j[c_j, :])),
    p | L ~ Dirichlet(n + 1 + S),   mu_j[:, h] | L ~ Dirichlet(K_j[:, h] + 1 + L_j[:, h]),

for all pairs and ``settings.gibbs_chains`` chains at once (NumPy arrays of shape (pairs, chains,
...)), each chain started from its own draw of ``p ~ Dir(n + 1)``, ``mu_j[:, h] ~ Dir(K_j[:, h] + 1)``,
relabelled by a permutation of the true outcome of its own (the identity for the first chain).
The estimates are Rao-Blackwellised: given ``L``, ``p ~ Dirichlet(n + 1 + S)`` exactly, so each
kept iteration contributes ``theta(S) = I_{1/2}(n< + 1 + S<, n> + 1 + S>)`` and ``E[p | S]``
rather than an indicator. After ``gibbs_warmup`` iterations the chains run in blocks of
``gibbs_block``; a pair stops once the effective sample size of its ``theta(S)`` series over all
chains (NumPyro's estimator) is at least ``is_min_ess``, its split R-hat is at most
``gibbs_max_rhat`` and either its Monte-Carlo standard error ``sd(theta(S)) / sqrt(ESS)`` is at most
``is_target_se`` or ``theta`` is more than ``is_decision_z`` standard errors from both thresholds.
A pair still unsettled after ``gibbs_max_iterations`` goes to NUTS unless its ESS and R-hat pass.

Data augmentation alone mixes slowly when the unrevealed items carry much more information than
the revealed ones (the missing-information fraction is high: many metric-only items and few
revealed items): ``p | L`` and ``L | p, mu`` are both sharp, so each sweep moves ``p`` by little, and
with few revealed items the chains seldom cross between the relabelled humps of the posterior. Each
sweep therefore ends with Metropolis-Hastings moves on the *collapsed* posterior of ``(p, mu)``
(``L`` integrated out: ``prod_c (sum_h p_h prod_j mu_j[c_j, h])^{u_c}`` times the Dirichlet
factors ``p^n`` and ``mu_j^{K_j}`` of the revealed items and the flat priors), which leaves the
marginal of ``(p, mu)`` invariant:

* :meth:`_Sweep.relabel`: propose the state relabelled by a uniformly drawn permutation of the true
  outcome; the unrevealed items' likelihood and the priors cancel from the ratio, so it costs a few
  operations and crosses between humps as often as the revealed items allow (with none revealed
  the posterior is symmetric and every proposal is accepted);
* :meth:`_Sweep.shift`: ``settings.gibbs_shift_steps`` random-walk Metropolis steps on ``p`` alone,
  ``mu`` held, in additive log-ratio coordinates (with the Jacobian), the step covariance adapted
  per chain during the warm-up only (:class:`_Walker`): it breaks the ``p``-``L`` coupling at the
  cost of a few operations on the cells per step.

* :meth:`_Sweep.ridge` (two metrics only): ``settings.gibbs_ridge_steps`` moves along the ridge of
  ``(p, mu)`` that two metrics' outcomes leave unidentified: the first metric's joint law with the
  truth times a matrix with unit row sums, the second metric's matrix times its inverse transposed.
  The unrevealed items' likelihood is the same at both ends, so the move is accepted on the
  revealed items alone however many items are unrevealed (~10^4 in the golden settings, where the
  two moves above leave the chains on the ridge: ESS ~120 in 12,000 sweeps, ~4,400 with it).

All are Metropolis-within-Gibbs steps (Tierney 1994, Ann. Statist. 22:1701) for the marginal of
``(p, mu)``; the next sweep draws ``L | p, mu`` from its full conditional, so every kept ``S`` is
still drawn given a state whose ``(p, mu)`` follows the posterior, and ``theta(S)`` stays a valid
Rao-Blackwellised estimate. The route's estimates use ``S`` only (the moves come after it in the
sweep). With three or more metrics the joint law is identified and there is no such ridge; a pair
whose chains still fail their diagnostics goes to NUTS. Random numbers
come from one NumPy stream per call (``default_rng([seed, JOINT_STREAM])``): same inputs and seed
give the same result, but a pair's draws depend on the other pairs of the call. The sweeps that
build the ``joint_importance`` proposal (:func:`conditional_parameters`) are plain data augmentation.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
from scipy.special import betainc

from prefeval_core.decision.joint_data import JointInputs
from prefeval_core.decision.settings import SamplerSettings
from prefeval_core.vocabulary.outcomes import BETTER, WORSE

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
JOINT_STREAM = 0x6A17
"""Second word of the seed of the joint route's stream."""
PERMUTATIONS = np.array(list(itertools.permutations(range(3))))
"""The six permutations of the true outcome (6, 3), the identity first."""


@dataclass(frozen=True)
class GibbsSummary:
    """Estimates of P pairs (arrays in the order of the input rows).

    Attributes:
        theta: (P,) ``P(p> > p< | data)``; p_mean: (P, 3) ``E[p | data]``.
        theta_mc_se: (P,) Monte-Carlo standard error of ``theta``.
        ess: (P,) effective sample size of the ``theta(S)`` series over all chains.
        rhat: (P,) its split R-hat.
        iterations: (P,) Gibbs iterations per chain (warm-up included).
        settled: (P,) whether the pair met the stop rule (else it needs NUTS).
        kept: with ``keep_draws=True``, per pair the Dirichlet parameters ``n + 1 + S`` (N, 3) of
            every kept iteration of every chain (``p | S`` is exactly that Dirichlet); else ``None``.
    """

    theta: FloatArray
    p_mean: FloatArray
    theta_mc_se: FloatArray
    ess: FloatArray
    rhat: FloatArray
    iterations: IntArray
    settled: npt.NDArray[np.bool_]
    kept: tuple[FloatArray, ...] | None = None


@dataclass
class _State:
    """The chains of a batch of pairs (private, mutable): ``p`` (B, C, 3), ``columns`` (B, C, k, h, c)."""

    p: FloatArray
    columns: FloatArray


def joint_gibbs(inputs: JointInputs, *, seed: int, gamma: float, settings: SamplerSettings, keep_draws: bool = False) -> GibbsSummary:
    """Run the data-augmentation Gibbs sampler (module docstring) on every pair of ``inputs``.

    Every pair must have at least one unrevealed item with a metric outcome. ``keep_draws`` keeps
    the Dirichlet parameters of ``p`` of every kept iteration (``GibbsSummary.kept``).
    """
    P = inputs.n.shape[0]
    rng = np.random.default_rng([seed, JOINT_STREAM])
    out = GibbsSummary(
        np.full(P, np.nan),
        np.full((P, 3), np.nan),
        np.full(P, np.nan),
        np.zeros(P),
        np.full(P, np.nan),
        np.zeros(P, np.int64),
        np.zeros(P, bool),
    )
    alphas: list[list[FloatArray]] | None = [[] for _ in range(P)] if keep_draws else None
    chunk = max(1, settings.is_chunk_draws // (settings.gibbs_chains * max(1, inputs.u.shape[1])))
    for start in range(0, P, chunk):
        _run_batch(inputs, np.arange(start, min(P, start + chunk)), rng, gamma, settings, out, alphas)
    if alphas is None:
        return out
    return replace(out, kept=tuple(np.concatenate(a).reshape(-1, 3) if a else np.zeros((0, 3)) for a in alphas))


def _run_batch(
    inputs: JointInputs,
    pairs: IntArray,
    rng: np.random.Generator,
    gamma: float,
    settings: SamplerSettings,
    out: GibbsSummary,
    alphas: list[list[FloatArray]] | None,
) -> None:
    n = inputs.n[pairs]
    C = settings.gibbs_chains
    sweep, state = _start(inputs, pairs, rng, C)
    walker = _Walker.start(len(pairs), C)
    ridge_steps = settings.gibbs_ridge_steps if inputs.K.shape[1] == 2 else 0
    for t in range(settings.gibbs_warmup):
        sweep.step(rng, state)
        walker.moved(*sweep.relabel(rng, state))
        if settings.gibbs_shift_steps:
            walker.adapt(t, settings.gibbs_warmup, *sweep.shift(rng, state, walker.root(), settings.gibbs_shift_steps))
        if ridge_steps:
            walker.adapt_ridge(t, sweep.ridge(rng, state, np.exp(walker.ridge_log_scale), ridge_steps))
    active = np.arange(len(pairs))
    theta_series: list[list[FloatArray]] = [[] for _ in pairs]
    p_sums = np.zeros((len(pairs), 3))
    kept = np.zeros(len(pairs), dtype=np.int64)
    iterations = settings.gibbs_warmup
    while active.size and iterations < settings.gibbs_max_iterations:
        block = min(settings.gibbs_block, settings.gibbs_max_iterations - iterations)
        thetas = np.empty((active.size, C, block))
        for t in range(block):
            S = sweep.step(rng, state)[0]
            walker.moved(*sweep.relabel(rng, state))
            if settings.gibbs_shift_steps:
                sweep.shift(rng, state, walker.root(), settings.gibbs_shift_steps)
            if ridge_steps:
                sweep.ridge(rng, state, np.exp(walker.ridge_log_scale), ridge_steps)
            alpha = n[active][:, None, :] + 1.0 + S  # (A, C, 3)
            thetas[:, :, t] = betainc(alpha[..., WORSE], alpha[..., BETTER], 0.5)
            p_sums[active] += (alpha / alpha.sum(axis=-1, keepdims=True)).sum(axis=1)
            if alphas is not None:
                for j, row in enumerate(active):
                    alphas[int(pairs[row])].append(alpha[j])
        iterations += block
        kept[active] += block * C
        for j, row in enumerate(active):
            theta_series[row].append(thetas[j])
        summary = _summaries([np.concatenate(theta_series[row], axis=1) for row in active])
        done = _settled(summary, gamma, settings)
        _write(out, pairs[active[done]], summary, done, p_sums[active[done]] / kept[active[done], None], iterations, settled=True)
        keep = ~done
        active, state = active[keep], _State(state.p[keep], state.columns[keep])
        sweep, walker = sweep.subset(keep), walker.subset(keep)
    if active.size:
        summary = _summaries([np.concatenate(theta_series[row], axis=1) for row in active])
        acceptable = (summary[2] >= settings.is_min_ess) & (summary[3] <= settings.gibbs_max_rhat)
        _write(out, pairs[active], summary, np.ones(active.size, bool), p_sums[active] / kept[active, None], iterations, settled=acceptable)


SHIFT_TARGET = 0.35
"""Acceptance probability the scale of the shift (:meth:`_Sweep.shift`, two coordinates) is tuned to
during the warm-up: the optimum of random-walk Metropolis is 0.44 in one dimension and falls towards
0.234 in many (Roberts & Rosenthal 2001, Statist. Sci. 16:351)."""
SHIFT_START_SD = 0.05
"""Initial standard deviation of the shift's steps in each log-ratio coordinate of ``p``: small, so
that the first steps are accepted even with thousands of unrevealed items; the scale adaptation
grows it within a few dozen sweeps if it is too small."""
SHIFT_WINDOWS = (0.125, 0.25, 0.5, 0.875)
"""Ends of the warm-up windows (fractions of ``gibbs_warmup``): at the end of each, the shift's step
covariance becomes ``2.38^2 / 2`` times the covariance of the chain's states in that window
(Gelman, Roberts & Gilks 1996; doubling windows as Stan's, whose later windows see states nearer
the stationary distribution); the scale adapts throughout, alone after the last window; nothing
adapts after the warm-up, so the kept iterations are a homogeneous Markov chain."""


RIDGE_TARGET = 0.234
"""Acceptance probability the ridge move's scale (:meth:`_Sweep.ridge`, six directions) is tuned to
during the warm-up (Roberts & Rosenthal 2001)."""
RIDGE_START_SD = 0.1
"""Initial standard deviation of the entries of the ridge move's generator ``E``."""


@dataclass
class _Walker:
    """The shift's proposal of each chain (private, mutable), in the chain's reference frame.

    ``frame`` (B, C) indexes :data:`PERMUTATIONS`: the chain's state is its reference-frame state
    relabelled by it (the accepted :meth:`_Sweep.relabel` moves composed), so a chain that crossed
    to a relabelled hump proposes steps of the same shape relabelled likewise. The proposal depends
    on ``frame``, not on ``p``: ``frame`` is an auxiliary variable, uniform and independent of
    ``(p, mu, L)`` in an extended target that every move leaves invariant (a relabelling moves
    ``(p, mu)`` and ``frame`` together; the shift is a symmetric walk given ``frame``). ``shape``
    (B, C, 2, 2) is a Cholesky factor of the step covariance in the reference frame, ``log_scale``
    (B, C) its log multiplier, ``window`` the reference-frame states of the current warm-up window;
    ``ridge_log_scale`` (B, C): the log scale of :meth:`_Sweep.ridge`'s generator (it does not depend
    on the frame: the ridge move commutes with relabelling).
    """

    frame: IntArray
    shape: FloatArray
    log_scale: FloatArray
    window: list[FloatArray]
    ridge_log_scale: FloatArray

    @classmethod
    def start(cls, pairs: int, chains: int) -> _Walker:
        shape = np.broadcast_to(np.eye(2) * SHIFT_START_SD, (pairs, chains, 2, 2)).copy()
        ridge = np.full((pairs, chains), np.log(RIDGE_START_SD))
        return cls(np.zeros((pairs, chains), np.int64), shape, np.zeros((pairs, chains)), [], ridge)

    def subset(self, keep: npt.NDArray[np.bool_]) -> _Walker:
        return _Walker(self.frame[keep], self.shape[keep], self.log_scale[keep], [], self.ridge_log_scale[keep])

    def adapt_ridge(self, t: int, acceptance: FloatArray) -> None:
        """After warm-up sweep ``t``: Robbins-Monro on the ridge move's log scale towards
        :data:`RIDGE_TARGET` (gain ``1 / sqrt(t + 1)``)."""
        self.ridge_log_scale += (acceptance - RIDGE_TARGET) / np.sqrt(1.0 + t)

    def root(self) -> FloatArray:
        """Cholesky factors (B, C, 2, 2) of the step covariance in each chain's current frame."""
        return np.exp(self.log_scale)[..., None, None] * np.matmul(_RELABEL_RATIOS[self.frame], self.shape)

    def moved(self, accept: npt.NDArray[np.bool_], choice: IntArray) -> None:
        """Compose the accepted relabellings into the frames."""
        self.frame = np.where(accept, _COMPOSE[self.frame, choice], self.frame)

    def adapt(self, t: int, warmup: int, acceptance: FloatArray, y: FloatArray) -> None:
        """After warm-up sweep ``t``: Robbins-Monro on the log scale towards :data:`SHIFT_TARGET`
        (gain ``1 / sqrt(t + 1)``), and the windows' covariances (:data:`SHIFT_WINDOWS`)."""
        self.log_scale += (acceptance - SHIFT_TARGET) / np.sqrt(1.0 + t)
        self.window.append(np.matmul(_RELABEL_RATIOS[_INVERSE[self.frame]], y[..., None])[..., 0])
        if t + 1 in {round(f * warmup) for f in SHIFT_WINDOWS} and len(self.window) >= 2:
            states = np.stack(self.window, axis=2)  # (B, C, T, 2)
            m = states.shape[2]
            centred = states - states.mean(axis=2, keepdims=True)
            covariance = np.matmul(np.swapaxes(centred, -1, -2), centred) / (m - 1)
            # shrunk towards a small multiple of the identity as Stan's (weight 5 / (m + 5)), so that
            # a short window or a chain that did not move still gives a positive-definite factor
            covariance = (m / (m + 5.0)) * covariance + (5.0 / (m + 5.0)) * 1e-3 * np.eye(2)
            self.shape = np.linalg.cholesky(covariance * (2.38**2 / 2))
            self.log_scale[:] = 0.0
            self.window = []


def _relabel_ratios() -> FloatArray:
    """(6, 2, 2): the linear map of ``y = (log p_0 / p_2, log p_1 / p_2)`` under each of
    :data:`PERMUTATIONS` (``p'_h = p_sigma(h)`` has ``y' = A y``)."""
    z = np.concatenate([np.eye(2), np.zeros((2, 1))], axis=1)  # (basis vector, h): log p_h - log p_2
    return np.stack([(z[:, sigma[:2]] - z[:, sigma[2:]]).T for sigma in PERMUTATIONS])


_RELABEL_RATIOS = _relabel_ratios()
_COMPOSE = np.array([[PERMUTATIONS.tolist().index(list(a[b])) for b in PERMUTATIONS] for a in PERMUTATIONS])
"""``_COMPOSE[i, j]``: index of ``PERMUTATIONS[i][PERMUTATIONS[j]]`` (relabelled by ``i``, then by ``j``)."""
_INVERSE = np.array([PERMUTATIONS.tolist().index(list(np.argsort(a))) for a in PERMUTATIONS])
"""``_INVERSE[i]``: index of the inverse of ``PERMUTATIONS[i]``."""


def _start(inputs: JointInputs, pairs: IntArray, rng: np.random.Generator, chains: int) -> tuple[_Sweep, _State]:
    """The sweep of ``pairs`` and ``chains`` chains, chain ``i`` started from a draw of
    ``p ~ Dir(n + 1)``, ``mu_j[:, h] ~ Dir(K_j[:, h] + 1)`` relabelled by the ``i mod 6``-th
    permutation ``sigma`` of the true outcome (``p_h`` and ``mu_j[:, h]`` taken from ``sigma(h)``;
    the first chain's is the identity): with few revealed items the relabelled humps of the
    posterior can carry real mass, a chain seldom crosses between them, and chains started apart
    let the diagnostics see it."""
    n = inputs.n[pairs]
    prior = np.swapaxes(inputs.K[pairs], -1, -2) + 1.0  # (B, k, h, c): Dirichlet parameters of mu's columns
    p = _dirichlet(rng, np.broadcast_to((n + 1.0)[:, None, :], (len(pairs), chains, 3)))
    columns = _dirichlet(rng, np.broadcast_to(prior[:, None], (len(pairs), chains, *prior.shape[1:])))
    sigma = PERMUTATIONS[np.arange(chains) % 6]  # (chains, 3)
    state = _State(np.take_along_axis(p, sigma[None], axis=2), np.take_along_axis(columns, sigma[None, :, None, :, None], axis=3))
    return _Sweep.build(inputs.patterns, n, prior, inputs.u[pairs]), state


def conditional_parameters(inputs: JointInputs, rng: np.random.Generator, *, chains: int, warmup: int, kept: int, thin: int) -> FloatArray:
    """Dirichlet parameters (P, kept * chains, 1 + 3k, 3) of the full conditionals of ``p`` (block 0)
    and of each ``mu_j[:, h]`` (block ``1 + 3j + h``) given the latent draw of every ``thin``-th
    iteration after ``warmup`` of ``chains`` chains per pair: the mixture over them is the
    ``joint_importance`` route's proposal (:mod:`~prefeval_core.decision.joint_importance`); the
    chains start as in the Gibbs route (relabelled prior draws)."""
    P, k = inputs.K.shape[:2]
    sweep, state = _start(inputs, np.arange(P), rng, chains)
    for _ in range(warmup):
        sweep.step(rng, state)
    parameters = []
    for i in range(kept * thin):
        S, columns = sweep.step(rng, state)
        if (i + 1) % thin == 0:
            p_alpha = inputs.n[:, None, :] + 1.0 + S
            parameters.append(np.concatenate([p_alpha[:, :, None, :], columns.reshape(P, chains, 3 * k, 3)], axis=2))
    return np.concatenate(parameters, axis=1)


@dataclass(frozen=True)
class _Sweep:
    """One Gibbs sweep over a batch of pairs; the nonzero unrevealed cells (pair, pattern) flattened
    and sorted by pair, with what every sweep reuses."""

    patterns: IntArray  # (J, k)
    n: FloatArray  # (B, 3)
    prior: FloatArray  # (B, k, h, c)
    u: FloatArray  # (B, J)
    pair: IntArray  # (N,) pair of each cell
    items: IntArray  # (N,) unrevealed items of each cell
    codes: IntArray  # (N, k) the cell's metric outcomes (3: none)
    starts: IntArray  # (B,) first cell of each pair
    groups: tuple[tuple[IntArray, IntArray, IntArray, IntArray], ...]  # per metric: its cells by (pair, outcome), the
    # first of each group, and the group's pair and outcome (the latent counts of mu_j's columns are sums over groups)

    @classmethod
    def build(cls, patterns: IntArray, n: FloatArray, prior: FloatArray, u: FloatArray) -> _Sweep:
        pair, pattern = np.nonzero(u > 0)
        codes = patterns[pattern]
        groups = []
        for j in range(patterns.shape[1]):
            cells = np.flatnonzero(codes[:, j] < 3)
            key = pair[cells] * 3 + codes[cells, j]
            order = np.argsort(key, kind="stable")
            first = np.flatnonzero(np.diff(key[order], prepend=-1) != 0)
            groups.append((cells[order], first, pair[cells[order[first]]], codes[cells[order[first]], j]))
        starts = np.searchsorted(pair, np.arange(len(n)))
        return cls(patterns, n, prior, u, pair, u[pair, pattern].astype(np.int64), codes, starts, tuple(groups))

    def subset(self, keep: npt.NDArray[np.bool_]) -> _Sweep:
        return _Sweep.build(self.patterns, self.n[keep], self.prior[keep], self.u[keep])

    def _log_joint(self, log_p: FloatArray, log_columns: FloatArray) -> FloatArray:
        """``log(p_h prod_j mu_j[c_j, h])`` (N, C, h) of every cell, from ``log p`` (B, C, 3) and the
        logs of mu's columns (B, C, k, h, c)."""
        log_mu = np.swapaxes(log_columns, -1, -2)  # (B, C, k, c, h)
        log_joint = log_p[self.pair]  # (N, C, h)
        for j in range(log_mu.shape[2]):
            present = self.codes[:, j] < 3
            log_joint[present] += log_mu[self.pair[present], :, j, self.codes[present, j], :]
        return log_joint

    def shift(self, rng: np.random.Generator, state: _State, root: FloatArray, steps: int) -> tuple[FloatArray, FloatArray]:
        """``steps`` random-walk Metropolis moves per chain on ``p`` alone, ``mu`` held, on the
        collapsed posterior (the latent outcomes integrated out) in the additive log-ratios ``y`` of
        ``p``: propose ``y + root @ z`` (``root`` (B, C, 2, 2)), accept with probability
        ``min(1, target(y') / target(y))``, ``log target = sum_h (n_h + 1) log p_h + sum_c u_c log
        sum_h p_h m_ch`` (``m_ch = prod_j mu_j[c_j, h]``, fixed during the moves; ``+ 1``: the
        Jacobian). Each step costs a few operations on the cells. Updates ``state.p`` in place;
        returns the mean acceptance probability (B, C) and ``y``."""
        log_m = self._log_joint(np.zeros_like(state.p), np.log(state.columns))  # (N, C, h)
        m = np.exp(log_m - log_m.max(axis=-1, keepdims=True))  # rescaled per cell: a constant of the target
        weights = self.n[:, None, :] + 1.0  # (B, 1, 3)

        def target(p: FloatArray) -> FloatArray:
            q = p[self.pair]
            cell = m[..., 0] * q[..., 0] + m[..., 1] * q[..., 1] + m[..., 2] * q[..., 2]
            return np.add.reduceat(self.items[:, None] * np.log(cell), self.starts, axis=0) + np.sum(weights * np.log(p), axis=-1)

        p = state.p
        y = np.log(p[..., :2]) - np.log(p[..., 2:])
        value = target(p)
        accepted = np.zeros(value.shape)
        for _ in range(steps):
            proposal = y + np.matmul(root, rng.standard_normal(y.shape)[..., None])[..., 0]
            top = np.maximum(proposal.max(axis=-1, keepdims=True), 0.0)
            e = np.concatenate([np.exp(proposal - top), np.exp(-top)], axis=-1)
            new_p = e / e.sum(axis=-1, keepdims=True)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                new_value = target(new_p)
                log_ratio = np.where(np.isfinite(new_value), new_value - value, -np.inf)
                accepted += np.exp(np.minimum(log_ratio, 0.0))
            accept = np.log(rng.random(value.shape)) < log_ratio
            y = np.where(accept[..., None], proposal, y)
            value = np.where(accept, new_value, value)
            p = np.where(accept[..., None], new_p, p)
        state.p = p
        return accepted / max(steps, 1), y

    def _log_revealed(self, p: FloatArray, columns: FloatArray) -> FloatArray:
        """The revealed items' log likelihood (B, C) with the flat priors: ``sum_h n_h log p_h + sum_{j, c, h}
        K_j[c, h] log mu_j[c, h]``, in the simplices' own coordinates."""
        mu_terms = np.sum((self.prior[:, None] - 1.0) * np.log(columns), axis=(2, 3, 4))
        return np.asarray(np.sum(self.n[:, None, :] * np.log(p), axis=-1) + mu_terms, dtype=np.float64)

    def ridge(self, rng: np.random.Generator, state: _State, scale: FloatArray, steps: int) -> FloatArray:
        """``steps`` Metropolis-Hastings moves per chain along the ridge of the collapsed posterior
        that two metrics leave (the pairs of a batch have two metrics; the route makes no such move
        with more, whose joint law with the truth is identified).

        With ``A = mu_0 diag(p)`` (the joint law of the first metric's outcome and the truth, (c, h))
        and ``T`` a 3 x 3 matrix with unit row sums, the move is ``A' = A T``, ``mu_1' = mu_1 T^-T``
        (so ``p' = T^T p``, ``mu_0' = A' diag(p')^-1``). Every frequency the unrevealed items pin,
        ``sum_h p_h mu_0[c, h] mu_1[c', h]`` and each metric's own margin (items the other did not
        rate), is unchanged: the unrevealed items' likelihood cancels from the ratio, which rests on
        the revealed items alone, however many items are unrevealed.

        ``T = (I - E/2)^-1 (I + E/2)`` (Cayley), ``E = s (Z - Z 1 1^T / 3)`` with ``Z`` standard normal
        (3 x 3) and ``s = scale``: ``E 1 = 0`` gives ``T 1 = 1``, and ``-E``, as likely as ``E``, gives
        ``T^-1``, which maps the new state back. Matrices with unit row sums form a group, so with
        ``E`` as an auxiliary variable the move is an involution of ``(state, E)``, and its acceptance
        ratio is ``pi(x') |J| / pi(x)`` with the Jacobian, in the simplices' coordinates,
        ``|J| = |det T| prod_h (p_h / p'_h)^2``: ``det T^3`` for ``A -> A T`` on matrices summing to 1,
        ``det T^-2`` for ``mu_1 -> mu_1 T^-T`` on column-stochastic matrices, and ``prod_h p_h^2`` from
        ``(p, mu_0)`` to ``A`` and back (Liu & Sabatti 2000, JASA 95:1214, on moves by a group).
        A state leaving the simplices is rejected. Updates ``state`` in place; returns the mean
        acceptance probability (B, C)."""
        B, C = state.p.shape[:2]
        eye = np.eye(3)
        p, columns = state.p, state.columns
        value = self._log_revealed(p, columns)
        accepted = np.zeros((B, C))
        for _ in range(steps):
            z = rng.standard_normal((B, C, 3, 3))
            E = scale[..., None, None] * (z - z.mean(axis=-1, keepdims=True)) / 2.0
            T = np.linalg.solve(eye - E, eye + E)
            new_p, new_columns = ridge_transform(p, columns, T, np.linalg.solve(eye + E, eye - E))
            inside: npt.NDArray[np.bool_] = np.all(new_p > 0.0, axis=-1) & np.all(new_columns > 0.0, axis=(2, 3, 4))
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                kept_columns = np.where(inside[..., None, None, None], new_columns, columns)
                new_value = self._log_revealed(np.where(inside[..., None], new_p, p), kept_columns)
                log_ratio = np.where(inside & np.isfinite(new_value), new_value - value + ridge_log_jacobian(p, new_p, T), -np.inf)
                accepted += np.exp(np.minimum(log_ratio, 0.0))
            accept = np.log(rng.random((B, C))) < log_ratio
            value = np.where(accept, new_value, value)
            p = np.where(accept[..., None], new_p, p)
            columns = np.where(accept[..., None, None, None], new_columns, columns)
        state.p, state.columns = p, columns
        return accepted / max(steps, 1)

    def relabel(self, rng: np.random.Generator, state: _State) -> tuple[npt.NDArray[np.bool_], IntArray]:
        """One Metropolis-Hastings move per chain on the collapsed posterior of ``(p, mu)``: propose
        the state relabelled by one of the five other permutations ``sigma`` of the true outcome,
        drawn uniformly (``p'_h = p_sigma(h)``, ``mu'_j[:, h] = mu_j[:, sigma(h)]``).

        The proposal is symmetric (``sigma`` and its inverse are equally likely) and a permutation of
        coordinates (Jacobian 1); the flat Dirichlet priors and the unrevealed items' collapsed
        likelihood ``prod_c (sum_h p_h prod_j mu_j[c_j, h])^{u_c}`` are invariant under it, so the
        acceptance ratio is that of the revealed items alone:
        ``prod_h (p'_h / p_h)^{n_h} prod_{j, c, h} (mu'_j[c, h] / mu_j[c, h])^{K_j[c, h]}``.
        Returns which chains moved (B, C) and the index of their ``sigma`` in :data:`PERMUTATIONS`.
        """
        B, C = state.p.shape[:2]
        choice = 1 + rng.integers(0, 5, (B, C))
        sigma = PERMUTATIONS[choice]  # (B, C, 3)
        p = np.take_along_axis(state.p, sigma, axis=2)
        columns = np.take_along_axis(state.columns, sigma[:, :, None, :, None], axis=3)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_ratio = np.sum(self.n[:, None, :] * np.log(p / state.p), axis=-1)
            log_ratio += np.sum((self.prior[:, None] - 1.0) * np.log(columns / state.columns), axis=(2, 3, 4))
        accept = np.log(rng.random((B, C))) < log_ratio  # a NaN ratio (a zero component) rejects
        state.p = np.where(accept[..., None], p, state.p)
        state.columns = np.where(accept[..., None, None, None], columns, state.columns)
        return accept, choice

    def step(self, rng: np.random.Generator, state: _State) -> tuple[FloatArray, FloatArray]:
        """Update ``state`` in place by one sweep; returns ``S`` (B, C, 3) of the new latent draw and
        the Dirichlet parameters (B, C, k, h, c) of mu's columns given it."""
        C = state.p.shape[1]
        log_joint = self._log_joint(np.log(state.p), np.log(state.columns))
        # L[c] ~ Multinomial(u_c, normalise(exp log_joint)) as two binomials; the three outcomes unrolled
        first, second, third = log_joint[..., 0], log_joint[..., 1], log_joint[..., 2]
        top = np.maximum(np.maximum(first, second), third)
        e_first, e_second, e_third = np.exp(first - top), np.exp(second - top), np.exp(third - top)
        rest_mass = e_second + e_third
        items = np.broadcast_to(self.items[:, None], (len(self.pair), C))
        got_first = rng.binomial(items, np.minimum(e_first / (e_first + rest_mass), 1.0))
        left = items - got_first
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(rest_mass > 0.0, e_second / rest_mass, 0.0)
        got_second = rng.binomial(left, np.minimum(share, 1.0))
        latent = np.stack([got_first, got_second, left - got_second], axis=-1).astype(np.float64)  # (N, C, h)
        S = np.add.reduceat(latent, self.starts, axis=0)  # (B, C, h): every pair has a cell
        state.p = _dirichlet(rng, self.n[:, None, :] + 1.0 + S)
        columns = np.broadcast_to(self.prior[:, None], (len(self.n), C, *self.prior.shape[1:])).copy()  # (B, C, k, h, c)
        for j, (cells, heads, group_pair, group_code) in enumerate(self.groups):
            if cells.size:
                columns[group_pair, :, j, :, group_code] += np.add.reduceat(latent[cells], heads, axis=0)  # (groups, C, h)
        state.columns = _dirichlet(rng, columns)
        return S, columns


def ridge_transform(p: FloatArray, columns: FloatArray, T: FloatArray, T_inverse: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The ridge move's map (:meth:`_Sweep.ridge`): ``A = mu_0 diag(p)`` becomes ``A T``, ``mu_1``
    becomes ``mu_1 T^-T``; ``p`` (B, C, 3), ``columns`` (B, C, 2, h, c), ``T`` and its inverse
    (B, C, 3, 3). Returns the new ``p`` and columns (a state outside the simplices where ``T``
    takes ``A`` or ``mu_1`` out of them)."""
    joint = np.swapaxes(columns[:, :, 0], -1, -2) * p[:, :, None, :]  # (B, C, c, h)
    moved = np.matmul(joint, T)
    new_p = moved.sum(axis=-2)
    new_columns = np.empty_like(columns)
    with np.errstate(divide="ignore", invalid="ignore"):
        new_columns[:, :, 0] = np.swapaxes(moved / new_p[:, :, None, :], -1, -2)
    new_columns[:, :, 1] = np.swapaxes(np.matmul(np.swapaxes(columns[:, :, 1], -1, -2), np.swapaxes(T_inverse, -1, -2)), -1, -2)
    return new_p, new_columns


def ridge_log_jacobian(p: FloatArray, new_p: FloatArray, T: FloatArray) -> FloatArray:
    """``log |J|`` (B, C) of :func:`ridge_transform` in the simplices' coordinates:
    ``log |det T| + 2 sum_h log(p_h / p'_h)`` (derivation in :meth:`_Sweep.ridge`)."""
    return np.asarray(np.log(np.abs(np.linalg.det(T))) + 2.0 * np.sum(np.log(p) - np.log(new_p), axis=-1), dtype=np.float64)


def multinomial(rng: np.random.Generator, total: IntArray, prob: FloatArray) -> FloatArray:
    """Draws (..., 3) of ``Multinomial(total, prob)`` by two binomials (vectorised)."""
    first = rng.binomial(total, np.clip(prob[..., 0], 0.0, 1.0))
    rest = total - first
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(prob[..., 0] < 1.0, prob[..., 1] / (1.0 - prob[..., 0]), 0.0)
    second = rng.binomial(rest, np.clip(share, 0.0, 1.0))
    return np.stack([first, second, rest - second], axis=-1).astype(np.float64)


def _dirichlet(rng: np.random.Generator, alpha: FloatArray) -> FloatArray:
    gammas = rng.standard_gamma(alpha)
    return np.asarray(gammas / gammas.sum(axis=-1, keepdims=True), dtype=np.float64)


def _summaries(series: list[FloatArray]) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """theta, its MC s.e., ESS and split R-hat of each pair's ``theta(S)`` series (C, T)."""
    # NumPyro's diagnostics (plain NumPy) are imported here, not with the module: importing numpyro
    # brings JAX (~2 s, ~130 MB), which a study whose decisions need no sampler never uses
    from numpyro.diagnostics import effective_sample_size, split_gelman_rubin

    theta, se, ess, rhat = (np.empty(len(series)) for _ in range(4))
    for i, chains in enumerate(series):
        theta[i] = chains.mean()
        spread = chains.var()
        if spread <= 1e-24:  # every draw gives the same theta(S): no Monte-Carlo error
            se[i], ess[i], rhat[i] = 0.0, np.inf, 1.0
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            ess[i] = float(effective_sample_size(chains[:, :, None])[0])
            rhat[i] = float(split_gelman_rubin(chains[:, :, None])[0])
        se[i] = np.sqrt(spread / ess[i]) if ess[i] > 0 else np.inf
    return theta, se, ess, rhat


def _settled(
    summary: tuple[FloatArray, FloatArray, FloatArray, FloatArray], gamma: float, settings: SamplerSettings
) -> npt.NDArray[np.bool_]:
    theta, se, ess, rhat = summary
    distance = np.minimum(np.abs(theta - gamma / 2.0), np.abs(theta - (1.0 - gamma / 2.0)))
    with np.errstate(invalid="ignore"):
        return (
            (ess >= settings.is_min_ess)
            & (rhat <= settings.gibbs_max_rhat)
            & ((se <= settings.is_target_se) | (distance > settings.is_decision_z * se))
        )


def _write(
    out: GibbsSummary,
    rows: IntArray,
    summary: tuple[FloatArray, FloatArray, FloatArray, FloatArray],
    which: npt.NDArray[np.bool_],
    p_mean: FloatArray,
    iterations: int,
    *,
    settled: bool | npt.NDArray[np.bool_],
) -> None:
    theta, se, ess, rhat = (a[which] for a in summary)
    out.theta[rows] = np.clip(theta, 0.0, 1.0)
    out.theta_mc_se[rows] = se
    out.ess[rows] = ess
    out.rhat[rows] = rhat
    out.p_mean[rows] = p_mean
    out.iterations[rows] = iterations
    out.settled[rows] = settled
