"""carom.envs: Gymnasium's Box2D tasks on carom (the ``envs`` extra brings gymnasium).

Importing this package registers, with Gymnasium's registry:

* ``carom/LunarLander-v3`` (``continuous=True`` for the continuous version; ``gravity``, ``enable_wind``,
  ``wind_power``, ``turbulence_power``), 1,000 steps at most;
* ``carom/BipedalWalker-v3`` (1,600 steps) and ``carom/BipedalWalkerHardcore-v3`` (2,000 steps, stumps, pits and
  stairs);
* ``carom/CarRacing-v3`` (96×96×3 pixels; ``continuous``, ``domain_randomize``, ``lap_complete_percent``), 1,000
  steps.

Each keeps the observation and action spaces, rewards, episode ends, constructor options, ``render_fps`` and
the look of Gymnasium 1.x's Box2D version of the task; each module's docstring says where Box2D 2.3 and carom
differ and how the task was matched.

``gymnasium.make_vec("carom/LunarLander-v3", num_envs=N)`` (and ``continuous=True``) returns the native vector
version, :class:`LunarLanderVector`: every lander stepped in one compiled call, env i bitwise the single
environment seeded ``seed + i``; ``carom/BipedalWalker-v3`` and ``carom/BipedalWalkerHardcore-v3`` likewise
(:class:`BipedalWalkerVector`). CarRacing vectorises through Gymnasium's ``SyncVectorEnv``
(``vectorization_mode="sync"``). The modules import only when an environment is made, so that
``import carom.envs`` costs little.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gymnasium.envs.registration import register, registry

if TYPE_CHECKING:       # (at run time, imported on first use: ``__getattr__``)
    from .bipedal_walker import BipedalWalker
    from .car_racing import CarRacing
    from .lunar_lander import LunarLander
    from .lunar_lander_vector import LunarLanderVector
    from .bipedal_walker_vector import BipedalWalkerVector

__all__ = ["LunarLander", "BipedalWalker", "CarRacing", "LunarLanderVector", "BipedalWalkerVector"]

#: (id, entry point, max_episode_steps, reward_threshold, kwargs) of each registration
_SPECS: tuple[tuple[str, str, int, int, dict[str, Any]], ...] = (
    ("carom/LunarLander-v3", "carom.envs.lunar_lander:LunarLander", 1000, 200, {}),
    ("carom/BipedalWalker-v3", "carom.envs.bipedal_walker:BipedalWalker", 1600, 300, {}),
    ("carom/BipedalWalkerHardcore-v3", "carom.envs.bipedal_walker:BipedalWalker", 2000, 300, {"hardcore": True}),
    ("carom/CarRacing-v3", "carom.envs.car_racing:CarRacing", 1000, 900, {}),
)

#: the native vector versions (``gymnasium.make_vec(id, num_envs=N)``: every env in one compiled call)
_VECTOR: dict[str, str] = {
    "carom/LunarLander-v3": "carom.envs.lunar_lander_vector:LunarLanderVector",
    "carom/BipedalWalker-v3": "carom.envs.bipedal_walker_vector:BipedalWalkerVector",
    "carom/BipedalWalkerHardcore-v3": "carom.envs.bipedal_walker_vector:BipedalWalkerVector",
}

for _id, _entry, _steps, _threshold, _kwargs in _SPECS:
    if _id not in registry:
        register(id=_id, entry_point=_entry, max_episode_steps=_steps, reward_threshold=_threshold,
                 kwargs=_kwargs, vector_entry_point=_VECTOR.get(_id))


def __getattr__(name: str) -> type:
    """``carom.envs.LunarLander`` and the others, imported on first use."""
    if name == "LunarLander":
        from .lunar_lander import LunarLander
        return LunarLander
    if name == "BipedalWalker":
        from .bipedal_walker import BipedalWalker
        return BipedalWalker
    if name == "LunarLanderVector":
        from .lunar_lander_vector import LunarLanderVector
        return LunarLanderVector
    if name == "BipedalWalkerVector":
        from .bipedal_walker_vector import BipedalWalkerVector
        return BipedalWalkerVector
    if name == "CarRacing":
        from .car_racing import CarRacing
        return CarRacing
    raise AttributeError(f"module 'carom.envs' has no attribute {name!r}")
