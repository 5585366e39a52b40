"""A platformer: a character jumps up through one-way platforms and lands on them from above.

``one_way=(0, 1)`` makes a shape solid only for what meets it from the side (0, 1) points to (above): the
character passes up through a platform from below and stands on it once above. The character is a capsule
with ``fixed_rotation`` (it never tips over), moved by setting its velocity; it is grounded when a short ray
cast down from its feet hits something. In a window the arrow keys steer (up jumps); without keys (and
headless) it walks by itself, turning at the walls and jumping whenever it stands.
"""
import carom
from carom.geometry import Capsule, box
from carom.render import play

SPEED, JUMP = 4.0, 7.5
state = {}


def build():
    """A room with seven one-way platforms in a zigzag and a character on the floor."""
    world = carom.World(gravity=(0, -12))
    room = world.static_body
    room.add_shape(box(10, 0.5, center=(0, -0.5)), friction=0.8)
    room.add_shape(box(0.5, 8, center=(-10.5, 8)))
    room.add_shape(box(0.5, 8, center=(10.5, 8)))
    for k in range(7):
        x = -5.0 if k % 2 == 0 else 4.0
        room.add_shape(box(2.5, 0.1, center=(x + 0.3 * k, 1.6 + 1.6 * k)), friction=0.8, one_way=(0, 1))
    hero = world.add_body(position=(-8.0, 0.6))
    hero.add_shape(Capsule((0, -0.3), (0, 0.3), 0.3), density=1.0, friction=0.0, category=0b10)
    hero.fixed_rotation = True                               # it never tips over
    hero.sleep_enabled = False
    state.update(hero=hero, direction=1.0, cooldown=0)
    return world


def grounded(world, hero):
    """Something solid right under the feet (a ray of 0.2 m from the capsule's bottom, ground shapes only)."""
    foot = hero.position - (0.0, 0.55)
    hit = world.raycast_first(foot, foot - (0.0, 0.2), mask=0b01)
    return hit is not None and hero.velocity[1] <= 0.5


def control(app):
    """Steer the character: keys in a window, a simple walker otherwise."""
    world, hero = app.world, state["hero"]
    vx, vy = hero.velocity
    direction, jump = state["direction"], False
    keys = None if app.headless else app.pygame.key.get_pressed()
    pg = app.pygame
    if keys is not None and (keys[pg.K_LEFT] or keys[pg.K_RIGHT] or keys[pg.K_UP]):
        direction = (keys[pg.K_RIGHT] - keys[pg.K_LEFT]) * 1.0
        jump = bool(keys[pg.K_UP])
    else:
        x = hero.position[0]
        if (x > 9.0 and direction > 0) or (x < -9.0 and direction < 0):
            direction = -direction
        state["direction"] = direction
        jump = state["cooldown"] <= 0
    state["cooldown"] -= 1
    on_ground = grounded(world, hero)
    if jump and on_ground:
        vy = JUMP
        state["cooldown"] = 20
    hero.velocity = (SPEED * direction, vy)
    app.caption = f"height {hero.position[1]:4.1f} m   {'standing' if on_ground else 'in the air'}"


def main(argv=None):
    """Run the example (window, or out/platformer.gif headless)."""
    return play(build, name="platformer", argv=argv, lower=(-11, -1), upper=(11, 15), on_step=control,
                default_frames=360)


if __name__ == "__main__":
    main()
