"""carom/CarRacing-v3 against Gymnasium's Box2D original: spaces, env checker, the same track and colours for
a seed, the same pictures, a scripted driver completing a lap with the tile rule's reward, determinism, errors."""
import math

import numpy as np
import pytest

import gymnasium as gym
import gymnasium.envs.box2d.car_racing  # noqa: F401  (Box2D is a test dependency)
from gymnasium.utils.env_checker import check_env

import carom
import carom.envs  # noqa: F401  (registers the environments)


@pytest.mark.parametrize("continuous", [True, False])
def test_check_env_and_spaces(continuous):
    env = gym.make("carom/CarRacing-v3", continuous=continuous)
    check_env(env.unwrapped, skip_render_check=True)
    theirs = gym.make("CarRacing-v3", continuous=continuous)
    assert env.observation_space == theirs.observation_space
    assert env.action_space == theirs.action_space
    assert env.spec.max_episode_steps == theirs.spec.max_episode_steps == 1000
    assert env.metadata["render_fps"] == theirs.metadata["render_fps"]


@pytest.mark.parametrize("domain_randomize", [False, True])
def test_same_track_colours_and_picture_as_the_original(domain_randomize):
    ours = gym.make("carom/CarRacing-v3", domain_randomize=domain_randomize)
    theirs = gym.make("CarRacing-v3", domain_randomize=domain_randomize)
    a, _ = ours.reset(seed=3)
    b, _ = theirs.reset(seed=3)
    u, v = ours.unwrapped, theirs.unwrapped
    assert len(u.track) == len(v.track)
    np.testing.assert_allclose(np.array(u.track), np.array(v.track))
    theirs_tiles = np.array([t.fixtures[0].shape.vertices for t in v.road])   # (Box2D reorders vertices)
    np.testing.assert_allclose(np.sort(u.tiles, axis=1), np.sort(theirs_tiles, axis=1), atol=1e-4)
    np.testing.assert_array_equal(u.road_color, v.road_color)
    np.testing.assert_array_equal(u.grass_color, v.grass_color)
    for _ in range(30):
        a, *_ = ours.step(np.array([0.1, 0.6, 0.0], np.float32))
        b, *_ = theirs.step(np.array([0.1, 0.6, 0.0], np.float32))
    assert a.shape == b.shape == (96, 96, 3) and a.dtype == np.uint8
    diff = np.abs(a.astype(int) - b.astype(int))
    assert diff.mean() < 6.0 and (diff.max(axis=2) < 40).mean() > 0.95, diff.mean()


def drive_a_lap(seed):
    """A scripted driver: steer for the centre-line point 6 tiles ahead of the nearest (from the track data),
    hold 25 m/s. Returns (total reward, frames, tiles visited, tiles, info)."""
    env = gym.make("carom/CarRacing-v3", max_episode_steps=4000)
    env.reset(seed=seed)
    u = env.unwrapped
    points = np.array([t[2:4] for t in u.track])
    n = len(points)
    nearest, total, frames = 0, 0.0, 0
    while True:
        hull = u.car.hull
        p, a = np.asarray(hull.position), hull.angle
        window = (nearest + np.arange(-5, 20)) % n
        nearest = int(window[np.argmin(np.linalg.norm(points[window] - p, axis=1))])
        d = points[(nearest + 6) % n] - p
        forward = np.array([-math.sin(a), math.cos(a)])
        error = math.atan2(forward[0] * d[1] - forward[1] * d[0], forward @ d)
        speed = float(np.hypot(*hull.velocity))
        action = np.array([np.clip(-2.0 * error, -1, 1), 0.3 if speed < 25 else 0.0, 0.0 if speed < 30 else 0.3],
                          np.float32)
        _, r, terminated, truncated, info = env.step(action)
        total += r
        frames += 1
        if terminated or truncated:
            return total, frames, u.tile_visited_count, n, info


def test_scripted_driver_completes_a_lap_and_the_tile_rule_holds():
    total, frames, visited, n, info = drive_a_lap(1)
    assert info.get("lap_finished") is True
    assert visited == n
    assert total == pytest.approx(1000.0 - 0.1 * frames, abs=1e-6)
    assert frames < 2500


def rollout(continuous, seed=2, steps=80):
    env = gym.make("carom/CarRacing-v3", continuous=continuous)
    env.action_space.seed(seed)
    frames = [env.reset(seed=seed)[0]]
    for _ in range(steps):
        frames.append(env.step(env.action_space.sample())[0])
    return np.array(frames), env.unwrapped.car.hull.position


def test_same_seed_same_episode_on_any_thread_count():
    before = carom.get_num_threads()
    try:
        carom.set_num_threads(1)
        one, p1 = rollout(True)
        again, p2 = rollout(True)
        carom.set_num_threads(2)
        two, p3 = rollout(True)
    finally:
        carom.set_num_threads(before)
    assert one.tobytes() == again.tobytes() == two.tobytes()
    assert p1.tobytes() == p2.tobytes() == p3.tobytes()
    discrete, _ = rollout(False, steps=20)
    assert discrete.shape == (21, 96, 96, 3)


def test_bad_actions_name_the_action():
    env = gym.make("carom/CarRacing-v3").unwrapped
    env.reset(seed=0)
    with pytest.raises(gym.error.InvalidAction, match="1.5"):
        env.step(np.array([0.0, 1.5, 0.0], np.float32))
    disc = gym.make("carom/CarRacing-v3", continuous=False).unwrapped
    disc.reset(seed=0)
    with pytest.raises(gym.error.InvalidAction, match="9"):
        disc.step(9)
    with pytest.raises(gym.error.ResetNeeded):
        gym.make("carom/CarRacing-v3").unwrapped.step(np.zeros(3, np.float32))


def test_rgb_array_and_vector_envs():
    env = gym.make("carom/CarRacing-v3", render_mode="rgb_array")
    env.reset(seed=0)
    env.step(np.array([0.0, 1.0, 0.0], np.float32))
    frame = env.render()
    assert frame.shape == (400, 600, 3) and frame.dtype == np.uint8
    for env_id in ("carom/LunarLander-v3", "carom/BipedalWalker-v3", "carom/CarRacing-v3"):
        envs = gym.make_vec(env_id, num_envs=2, vectorization_mode="sync")
        obs, _ = envs.reset(seed=[1, 2])
        obs, reward, terminated, truncated, _ = envs.step(envs.action_space.sample())
        assert obs.shape == (2,) + envs.single_observation_space.shape
        envs.close()
