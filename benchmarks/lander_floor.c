/* The floor of a vector LunarLander: Box2D v3's own step of one lander world (benchmarks/lander_floor.py builds
   it against build/box2d's libbox2d.a, as settle_probe.c).

   The world is carom's LunarLander world (carom/envs/lunar_lander.py, as Gymnasium's original builds it): a ground
   edge and ten terrain edges, each on a static body of its own (friction 0.1); a six-sided hull (density 5,
   friction 0.1) pushed by a random force of at most 1,000 N in x and y over the first step; two 4 x 16 px box legs
   (density 1, friction 0.3) on revolute joints with limits and motors (torque 40 N m); the legs and the hull collide
   with the ground only. 1/50 s steps of 4 substeps, one worker, no engines fired.

   lander_floor WORLDS STEPS SLEEP: builds WORLDS such worlds one after the other (seeds 1, 2, ...), steps each
   STEPS times, and prints one line per phase, "phase first last us_per_step": "awake" for steps 0-99 (the fall
   and the landing: every body awake), "asleep" for steps 301 on (how many landers had fallen asleep by then is
   the line "asleep_worlds N"). */
#include "box2d/box2d.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SCALE 30.0f
#define CHUNKS 11

static double now_us( void )
{
	struct timespec t;
	clock_gettime( CLOCK_MONOTONIC, &t );
	return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static float uniform( float lo, float hi )
{
	return lo + ( hi - lo ) * ( (float)rand() / (float)RAND_MAX );
}

/* a shape of the lander (hull or leg): its density, friction and collision category; it collides with the ground
   (category 0x1) only */
static b2ShapeDef lander_part( float density, float friction, uint64_t category )
{
	b2ShapeDef def = b2DefaultShapeDef();
	def.density = density;
	def.material.friction = friction;
	def.filter.categoryBits = category;
	def.filter.maskBits = 0x1;
	return def;
}

static b2WorldId build_lander( int sleep, unsigned seed )
{
	srand( seed );
	b2WorldDef wd = b2DefaultWorldDef();
	wd.gravity = ( b2Vec2 ){ 0.0f, -10.0f };
	wd.enableSleep = sleep;
	b2WorldId world = b2CreateWorld( &wd );

	float W = 600.0f / SCALE, H = 400.0f / SCALE;
	float height[CHUNKS + 1], x[CHUNKS], y[CHUNKS];
	for ( int i = 0; i <= CHUNKS; ++i )
		height[i] = uniform( 0.0f, H / 2 );
	for ( int i = CHUNKS / 2 - 2; i < CHUNKS / 2 + 3; ++i )
		height[i] = H / 4; /* the pad */
	for ( int i = 0; i < CHUNKS; ++i )
	{
		x[i] = W / ( CHUNKS - 1 ) * i;
		y[i] = 0.33f * ( height[i == 0 ? CHUNKS : i - 1] + height[i] + height[i + 1] );
	}
	b2ShapeDef ground = b2DefaultShapeDef();
	ground.material.friction = 0.1f;
	for ( int i = -1; i < CHUNKS - 1; ++i )
	{
		b2BodyDef bd = b2DefaultBodyDef();
		b2BodyId body = b2CreateBody( world, &bd );
		b2Segment edge = i < 0 ? ( b2Segment ){ { 0.0f, 0.0f }, { W, 0.0f } }
							   : ( b2Segment ){ { x[i], y[i] }, { x[i + 1], y[i + 1] } };
		b2CreateSegmentShape( body, &ground, &edge );
	}

	b2BodyDef hd = b2DefaultBodyDef();
	hd.type = b2_dynamicBody;
	hd.position = ( b2Vec2 ){ W / 2, H };
	b2BodyId hull = b2CreateBody( world, &hd );
	b2Vec2 points[6] = { { -14 / SCALE, 17 / SCALE }, { -17 / SCALE, 0 },			{ -17 / SCALE, -10 / SCALE },
						 { 17 / SCALE, -10 / SCALE }, { 17 / SCALE, 0 }, { 14 / SCALE, 17 / SCALE } };
	b2Hull outline = b2ComputeHull( points, 6 );
	b2Polygon hull_polygon = b2MakePolygon( &outline, 0.0f );
	b2ShapeDef hs = lander_part( 5.0f, 0.1f, 0x10 );
	b2CreatePolygonShape( hull, &hs, &hull_polygon );
	float fx = uniform( -1000.0f, 1000.0f ), fy = uniform( -1000.0f, 1000.0f );
	b2Body_ApplyForceToCenter( hull, ( b2Vec2 ){ fx, fy }, true );

	for ( int i = -1; i <= 1; i += 2 )
	{
		float ref = i * 0.05f, angle = -i * 0.54f + ref;
		float ax = i * 20 / SCALE, ay = 18 / SCALE, c = cosf( angle ), s = sinf( angle );
		b2BodyDef ld = b2DefaultBodyDef();
		ld.type = b2_dynamicBody;
		ld.position = ( b2Vec2 ){ W / 2 - ( c * ax - s * ay ), H - ( s * ax + c * ay ) };
		ld.rotation = b2MakeRot( angle );
		b2BodyId leg = b2CreateBody( world, &ld );
		b2Polygon leg_box = b2MakeBox( 2 / SCALE, 8 / SCALE );
		b2ShapeDef ls = lander_part( 1.0f, 0.3f, 0x20 );
		b2CreatePolygonShape( leg, &ls, &leg_box );
		b2RevoluteJointDef jd = b2DefaultRevoluteJointDef();
		jd.base.bodyIdA = hull;
		jd.base.bodyIdB = leg;
		jd.base.localFrameB.p = ( b2Vec2 ){ ax, ay };
		jd.base.localFrameB.q = b2MakeRot( -ref );
		jd.enableLimit = true;
		jd.lowerAngle = i == -1 ? 0.4f : -0.9f;
		jd.upperAngle = i == -1 ? 0.9f : -0.4f;
		jd.enableMotor = true;
		jd.motorSpeed = 0.3f * i;
		jd.maxMotorTorque = 40.0f;
		b2CreateRevoluteJoint( world, &jd );
	}
	return world;
}

int main( int argc, char** argv )
{
	int worlds = argc > 1 ? atoi( argv[1] ) : 64;
	int steps = argc > 2 ? atoi( argv[2] ) : 500;
	int sleep = argc > 3 ? atoi( argv[3] ) : 1;
	if ( steps <= 301 )
	{
		fprintf( stderr, "STEPS must be above 301\n" );
		return 2;
	}
	double awake = 0.0, asleep = 0.0;
	int asleep_worlds = 0;
	for ( int k = 0; k < worlds; ++k )
	{
		b2WorldId world = build_lander( sleep, (unsigned)k + 1 );
		for ( int i = 0; i < steps; ++i )
		{
			if ( i == 300 )
				asleep_worlds += b2World_GetAwakeBodyCount( world ) == 0;
			double t = now_us();
			b2World_Step( world, 1.0f / 50.0f, 4 );
			double d = now_us() - t;
			if ( i < 100 )
				awake += d;
			else if ( i > 300 )
				asleep += d;
		}
		b2DestroyWorld( world );
	}
	printf( "awake 0 99 %.3f\n", awake / ( 100.0 * worlds ) );
	printf( "asleep 301 %d %.3f\n", steps - 1, asleep / ( (double)( steps - 301 ) * worlds ) );
	printf( "asleep_worlds %d\n", asleep_worlds );
	return 0;
}
