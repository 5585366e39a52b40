"""carom/LunarLander-v3 against Gymnasium's Box2D original: spaces, env checker, Gymnasium's own heuristic
landing it (over 50 seeds), determinism, errors and pictures."""
import functools

import numpy as np
import pytest

import gymnasium as gym
from gymnasium.envs.box2d.lunar_lander import heuristic   # (Box2D is a test dependency)
from gymnasium.utils.env_checker import check_env

import carom
import carom.envs  # noqa: F401  (registers carom/LunarLander-v3)

from env_rollout import random_rollout

SEEDS = range(50)


def run_heuristic(env_id, continuous, seed):
    """(return, landed) of one episode of Gymnasium's heuristic; landed: the episode ended with +100."""
    env = gym.make(env_id, continuous=continuous)
    s, _ = env.reset(seed=seed)
    total, r = 0.0, 0.0
    while True:
        s, r, terminated, truncated, _ = env.step(heuristic(env, s))
        total += r
        if terminated or truncated:
            break
    env.close()
    return total, r == 100


@functools.lru_cache(maxsize=None)
def heuristic_results(env_id, continuous):
    results = [run_heuristic(env_id, continuous, seed) for seed in SEEDS]
    return np.array([r for r, _ in results]), np.array([landed for _, landed in results])


@pytest.mark.parametrize("continuous", [False, True])
def test_check_env(continuous):
    env = gym.make("carom/LunarLander-v3", continuous=continuous)
    check_env(env.unwrapped, skip_render_check=True)


@pytest.mark.parametrize("continuous", [False, True])
def test_spaces_equal_the_originals(continuous):
    ours = gym.make("carom/LunarLander-v3", continuous=continuous)
    theirs = gym.make("LunarLander-v3", continuous=continuous)
    assert ours.observation_space == theirs.observation_space
    assert ours.observation_space.dtype == theirs.observation_space.dtype
    assert ours.action_space == theirs.action_space
    assert ours.spec.max_episode_steps == theirs.spec.max_episode_steps == 1000
    assert ours.metadata["render_fps"] == theirs.metadata["render_fps"]


@pytest.mark.parametrize("continuous", [False, True])
def test_heuristic_lands(continuous):
    returns, landed = heuristic_results("carom/LunarLander-v3", continuous)
    assert returns.mean() >= 200.0, returns
    assert landed.mean() >= 0.9, landed


@pytest.mark.slow
@pytest.mark.parametrize("continuous", [False, True])
def test_heuristic_scores_as_on_the_original(continuous):
    ours, _ = heuristic_results("carom/LunarLander-v3", continuous)
    theirs, theirs_landed = heuristic_results("LunarLander-v3", continuous)
    assert theirs.mean() > 200.0 and theirs_landed.mean() >= 0.9       # the reference figures hold
    assert abs(ours.mean() - theirs.mean()) <= 0.1 * abs(theirs.mean()), (ours.mean(), theirs.mean())


def rollout(continuous, seed=3, steps=300, wind=False):
    return random_rollout(gym.make("carom/LunarLander-v3", continuous=continuous, enable_wind=wind), seed, steps)


@pytest.mark.parametrize("continuous", [False, True])
def test_same_seed_same_episode_on_any_thread_count(continuous):
    before = carom.get_num_threads()
    try:
        carom.set_num_threads(1)
        one = rollout(continuous, wind=True)
        again = rollout(continuous, wind=True)
        carom.set_num_threads(min(2, before if before > 1 else 2))
        two = rollout(continuous, wind=True)
    finally:
        carom.set_num_threads(before)
    assert one.dtype == np.float32
    assert one.tobytes() == again.tobytes()
    assert one.tobytes() == two.tobytes()
    assert not np.array_equal(one, rollout(continuous, seed=4, wind=True))


def test_wind_pushes_the_lander():
    calm = rollout(False, seed=5, steps=60)
    windy = rollout(False, seed=5, steps=60, wind=True)
    assert not np.array_equal(calm[10:], windy[10:])


def test_first_observation_matches_the_original():
    """The same seed gives the original's terrain and push; the first observation agrees to 1e-3."""
    for seed in (0, 1, 2):
        ours, _ = gym.make("carom/LunarLander-v3").reset(seed=seed)
        theirs, _ = gym.make("LunarLander-v3").reset(seed=seed)
        np.testing.assert_allclose(ours, theirs, atol=1e-3)


def test_bad_actions_name_the_action():
    env = gym.make("carom/LunarLander-v3").unwrapped
    env.reset(seed=0)
    with pytest.raises(gym.error.InvalidAction, match="7"):
        env.step(7)
    cont = gym.make("carom/LunarLander-v3", continuous=True).unwrapped
    cont.reset(seed=0)
    with pytest.raises(gym.error.InvalidAction, match="nan"):
        cont.step(np.array([np.nan, 0.0]))
    with pytest.raises(gym.error.InvalidAction, match="1.5"):
        cont.step(np.array([1.5, 0.0]))
    with pytest.raises(gym.error.ResetNeeded):
        gym.make("carom/LunarLander-v3").unwrapped.step(0)
    with pytest.raises(ValueError, match="gravity"):
        gym.make("carom/LunarLander-v3", gravity=-20.0)


def test_rgb_array_looks_like_the_original():
    env = gym.make("carom/LunarLander-v3", render_mode="rgb_array")
    env.reset(seed=0)
    for _ in range(5):
        env.step(2)
    frame = env.render()
    theirs = gym.make("LunarLander-v3", render_mode="rgb_array")
    theirs.reset(seed=0)
    for _ in range(5):
        theirs.step(2)
    reference = theirs.render()
    assert frame.shape == reference.shape == (400, 600, 3) and frame.dtype == np.uint8
    # the same terrain: sky (black) and ground (white) agree on nearly every pixel
    same = np.all(frame == reference, axis=2).mean()
    assert same > 0.97, same
    purple = np.all(frame == (128, 102, 230), axis=2)
    assert purple.sum() > 500                      # the lander is drawn in the original's colour
