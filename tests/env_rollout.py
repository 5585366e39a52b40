"""A seeded random rollout of an environment, shared by the environments' determinism tests."""
import numpy as np


def random_rollout(env, seed, steps):
    """The observations of ``steps`` random actions (the action space seeded with ``seed``) from
    ``env.reset(seed=seed)``, resetting after each episode end."""
    env.action_space.seed(seed)
    observations = [env.reset(seed=seed)[0]]
    for _ in range(steps):
        obs, r, terminated, truncated, _ = env.step(env.action_space.sample())
        observations.append(obs)
        if terminated or truncated:
            observations.append(env.reset()[0])
    return np.array(observations)
