"""The native vector LunarLander (``gymnasium.make_vec("carom/LunarLander-v3", num_envs=N)``) against its
oracle, Gymnasium's own ``SyncVectorEnv`` over the single carom environment: every observation, reward, end
flag and info bitwise equal, step by step, in each autoreset mode (NEXT_STEP, SAME_STEP, DISABLED), so env i
is the single environment seeded ``seed + i``. Plus the VectorEnv contract (spaces, metadata, seeding, infos,
render) and bad use (clear errors, nothing changed)."""
import numpy as np
import pytest

import gymnasium as gym
from gymnasium.vector import AutoresetMode, VectorEnv

import carom.envs  # noqa: F401  (registers the environments)
from carom.envs.lunar_lander_vector import LunarLanderVector

ID = "carom/LunarLander-v3"


def pair(n, mode=AutoresetMode.NEXT_STEP, **kwargs):
    native = gym.make_vec(ID, num_envs=n, autoreset_mode=mode, **kwargs)
    sync = gym.make_vec(ID, num_envs=n, vectorization_mode="sync", vector_kwargs={"autoreset_mode": mode}, **kwargs)
    return native, sync


def same_infos(a, b):
    assert set(a) == set(b), (a.keys(), b.keys())
    for k in a:
        if isinstance(a[k], dict):
            same_infos(a[k], b[k])
        elif a[k].dtype == object:
            for x, y in zip(a[k], b[k]):
                assert (x is None and y is None) or np.array_equal(x, y)
        else:
            assert np.array_equal(a[k], b[k]), k


def run_both(native, sync, actions, reset_when_done=False):
    o1, i1 = native.reset(seed=7)
    o2, i2 = sync.reset(seed=7)
    assert np.array_equal(o1, o2)
    ends = 0
    for a in actions:
        r1 = native.step(a)
        r2 = sync.step(a)
        for x, y in zip(r1[:4], r2[:4]):
            assert x.dtype == y.dtype or x.dtype.kind == y.dtype.kind
            assert np.array_equal(x, y)
        same_infos(r1[4], r2[4])
        done = r1[2] | r1[3]
        ends += int(done.sum())
        if reset_when_done and done.any():
            o1, _ = native.reset(options={"reset_mask": done})
            o2, _ = sync.reset(options={"reset_mask": done})
            assert np.array_equal(o1, o2)
    return ends


@pytest.mark.parametrize("continuous", [False, True])
def test_env_i_is_the_single_env_seeded_seed_plus_i_over_500_steps(continuous):
    n = 4
    native, sync = pair(n, continuous=continuous)
    space = native.action_space
    space.seed(3)
    actions = [space.sample() for _ in range(500)]
    ends = run_both(native, sync, actions)
    assert ends >= 4          # episodes ended and were reset on the way


@pytest.mark.parametrize("mode", [AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
def test_the_other_autoreset_modes_match_gymnasiums(mode):
    native, sync = pair(3, mode=mode, max_episode_steps=60)
    assert native.metadata["autoreset_mode"] == mode
    rng = np.random.default_rng(1)
    actions = [rng.integers(0, 4, 3) for _ in range(200)]
    ends = run_both(native, sync, actions, reset_when_done=mode == AutoresetMode.DISABLED)
    assert ends >= 3


def test_a_scripted_episode_end_in_each_mode():
    """A time limit of 5 steps ends every episode at step 5: NEXT_STEP gives the next episode's first observation
    one call later (reward 0), SAME_STEP in the same call (the last one in infos["final_obs"])."""
    single = gym.make(ID, max_episode_steps=5)
    first, _ = single.reset(seed=11)
    for _ in range(5):
        last, _, _, truncated, _ = single.step(0)
    assert truncated
    second, _ = single.reset()

    env = gym.make_vec(ID, num_envs=2, max_episode_steps=5)
    obs, _ = env.reset(seed=11)
    assert np.array_equal(obs[0], first)
    for _ in range(4):
        env.step(np.zeros(2, np.int64))
    obs, reward, terminated, truncated, infos = env.step(np.zeros(2, np.int64))
    assert truncated.all() and np.array_equal(obs[0], last) and infos == {}
    obs, reward, terminated, truncated, infos = env.step(np.full(2, 2))     # (ignored: the envs reset)
    assert np.array_equal(obs[0], second) and (reward == 0).all() and not truncated.any()

    env = gym.make_vec(ID, num_envs=2, max_episode_steps=5, autoreset_mode=AutoresetMode.SAME_STEP)
    env.reset(seed=11)
    for _ in range(4):
        env.step(np.zeros(2, np.int64))
    obs, reward, terminated, truncated, infos = env.step(np.zeros(2, np.int64))
    assert truncated.all() and np.array_equal(obs[0], second)
    assert infos["_final_obs"].all() and np.array_equal(infos["final_obs"][0], last)

    env = gym.make_vec(ID, num_envs=2, max_episode_steps=5, autoreset_mode=AutoresetMode.DISABLED)
    env.reset(seed=11)
    for _ in range(5):
        obs, _, _, truncated, _ = env.step(np.zeros(2, np.int64))
    assert truncated.all()
    obs2, _ = env.reset(options={"reset_mask": np.array([True, False])})
    assert np.array_equal(obs2[0], second) and np.array_equal(obs2[1], obs[1])


def test_the_vector_env_contract():
    env = gym.make_vec(ID, num_envs=5, render_mode="rgb_array")
    assert isinstance(env, VectorEnv) and isinstance(env.unwrapped, LunarLanderVector)
    assert env.num_envs == 5
    assert env.single_observation_space == gym.make(ID).observation_space
    assert env.single_action_space == gym.spaces.Discrete(4)
    assert env.observation_space.shape == (5, 8) and env.action_space.shape == (5,)
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    with pytest.raises(gym.error.ResetNeeded):
        env.step(np.zeros(5, np.int64))
    obs, infos = env.reset(seed=3)
    assert obs.dtype == np.float32 and env.observation_space.contains(obs) and infos == {}
    again, _ = env.reset(seed=3)
    assert np.array_equal(obs, again)
    other, _ = env.reset(seed=4)
    assert not np.array_equal(obs, other)
    assert np.array_equal(other[:4], obs[1:])           # seeds seed + i
    obs, rewards, terminated, truncated, infos = env.step(env.action_space.sample())
    assert rewards.dtype == np.float64 and rewards.shape == (5,)
    assert terminated.dtype == np.bool_ and truncated.dtype == np.bool_ and isinstance(infos, dict)
    frames = env.render()
    single = gym.make(ID, render_mode="rgb_array")
    assert len(frames) == 5 and all(f.shape == (400, 600, 3) and f.dtype == np.uint8 for f in frames)
    single.close()
    env.close()
    assert gym.make_vec(ID, num_envs=2, continuous=True).single_action_space.shape == (2,)
    with pytest.raises(ValueError, match="enable_wind"):
        gym.make_vec(ID, num_envs=2, enable_wind=True)


def test_bad_use_raises_and_changes_nothing():
    env = gym.make_vec(ID, num_envs=3)
    twin = gym.make_vec(ID, num_envs=3)
    env.reset(seed=5)
    twin.reset(seed=5)
    for bad in (np.zeros(2, np.int64), np.zeros((3, 1), np.int64), np.array([0, 1, 4]), np.array([0, -1, 2]),
                np.array([0.5, 1.0, 2.0]), "abc"):
        with pytest.raises(gym.error.InvalidAction):
            env.step(bad)
    for mask, error in ((np.ones(2, np.bool_), ValueError), (np.ones(3, np.int64), TypeError),
                        ([True, True, True], TypeError), (np.zeros(3, np.bool_), ValueError)):
        with pytest.raises(error):
            env.reset(options={"reset_mask": mask})
    with pytest.raises(ValueError):
        env.reset(seed=[1, 2])
    a = np.array([2, 1, 3])
    for x, y in zip(env.step(a)[:4], twin.step(a)[:4]):
        assert np.array_equal(x, y)
    cont = gym.make_vec(ID, num_envs=2, continuous=True)
    cont.reset(seed=1)
    for bad in (np.zeros((2, 3)), np.array([[0.0, 1.5], [0.0, 0.0]]), np.array([[np.nan, 0.0], [0.0, 0.0]])):
        with pytest.raises(gym.error.InvalidAction):
            cont.step(bad)


@pytest.mark.parametrize("env_id", [ID, "carom/BipedalWalker-v3"])
def test_a_compiled_reset_rebuilds_the_single_envs_world_bitwise(env_id):
    """The resets after the first put each world back in place in one compiled call: every array of world i's
    step tables (bodies, shapes, broad phase, joints, contacts) after the reset (and, for the lander, its first
    step) equals, byte for byte, the single environment's world reset with seed + i (16 terrains and pushes),
    also after episodes."""
    from carom.batch import _adapter

    def flat(value, out):
        if isinstance(value, np.ndarray):
            out.append(value)
        elif isinstance(value, tuple):
            for v in value:
                flat(v, out)
        return out

    n = 16
    env = gym.make_vec(env_id, num_envs=n).unwrapped
    env.reset(seed=100)
    env.action_space.seed(0)
    for _ in range(30):
        env.step(env.action_space.sample())
    env.reset(seed=200)
    assert env._template is not None
    for i in range(n):
        single = gym.make(env_id).unwrapped
        single.reset(seed=200 + i)
        ours = flat(env._batch._tables[i], [])
        theirs = flat(_adapter.world_tables(single.world)[1], [])
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()
        if env_id == ID:
            assert np.array_equal(env._smooth[i], single.terrain[:, 1])


# --- the native vector BipedalWalker ---------------------------------------------------------------------------
WALKER = "carom/BipedalWalker-v3"


@pytest.mark.parametrize("walker_id", [WALKER, "carom/BipedalWalkerHardcore-v3"])
def test_walker_i_is_the_single_walker_seeded_seed_plus_i_over_500_steps(walker_id):
    """Random actions, episodes ending (falls, or the time limit at 150 steps) and reset on the way."""
    native = gym.make_vec(walker_id, num_envs=3, max_episode_steps=150)
    sync = gym.make_vec(walker_id, num_envs=3, vectorization_mode="sync", max_episode_steps=150)
    space = native.action_space
    space.seed(3)
    actions = [space.sample() for _ in range(500)]
    ends = run_both(native, sync, actions)
    assert ends >= 6
    assert native.unwrapped.hardcore == (walker_id != WALKER)


@pytest.mark.parametrize("mode", [AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
def test_the_walkers_other_autoreset_modes_match_gymnasiums(mode):
    native = gym.make_vec(WALKER, num_envs=2, autoreset_mode=mode, max_episode_steps=40)
    sync = gym.make_vec(WALKER, num_envs=2, vectorization_mode="sync", vector_kwargs={"autoreset_mode": mode},
                        max_episode_steps=40)
    assert native.metadata["autoreset_mode"] == mode
    rng = np.random.default_rng(1)
    actions = [rng.uniform(-1, 1, (2, 4)) for _ in range(100)]
    assert run_both(native, sync, actions, reset_when_done=mode == AutoresetMode.DISABLED) >= 4


def test_the_walkers_vector_env_contract_and_bad_use():
    from carom.envs.bipedal_walker_vector import BipedalWalkerVector
    env = gym.make_vec(WALKER, num_envs=3, render_mode="rgb_array")
    twin = gym.make_vec(WALKER, num_envs=3)
    assert isinstance(env.unwrapped, BipedalWalkerVector) and env.num_envs == 3
    assert env.single_observation_space == gym.make(WALKER).observation_space
    assert env.observation_space.shape == (3, 24) and env.action_space.shape == (3, 4)
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert env.unwrapped.max_episode_steps == 1600
    assert gym.make_vec("carom/BipedalWalkerHardcore-v3", num_envs=1).unwrapped.max_episode_steps == 2000
    with pytest.raises(gym.error.ResetNeeded):
        env.step(np.zeros((3, 4)))
    obs, infos = env.reset(seed=5)
    twin.reset(seed=5)
    assert obs.dtype == np.float32 and infos == {}
    for bad in (np.zeros((3, 3)), np.zeros(4), np.full((3, 4), 1.5), np.array([[np.nan, 0, 0, 0]] * 3), "abc"):
        with pytest.raises(gym.error.InvalidAction):
            env.step(bad)
    for mask, error in ((np.ones(2, np.bool_), ValueError), (np.ones(3, np.int64), TypeError)):
        with pytest.raises(error):
            env.reset(options={"reset_mask": mask})
    a = np.full((3, 4), 0.5)
    for x, y in zip(env.step(a)[:4], twin.step(a)[:4]):
        assert np.array_equal(x, y)
    frames = env.render()
    assert len(frames) == 3 and all(f.shape == (400, 600, 3) and f.dtype == np.uint8 for f in frames)
    env.close()
