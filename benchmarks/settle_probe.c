/* The settle probe's Box2D v3 side (benchmarks/settle_probe.py builds it against build/box2d's libbox2d.a).

   stack N SECONDS: N boxes of 1 m (density 1, friction 0.6) on a static 40 x 2 m box centred at (0, -1),
   sleeping off, 60 Hz, 4 substeps; prints "t lean top" every second (lean: the largest |x| of any box, m).
   pyramid: Box2D's large_pyramid (base 100 on a 200 x 2 m box), sleeping off; prints the mean speed of the
   boxes (m/s) over steps 250-400. */
#include "box2d/box2d.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static b2WorldId make_world(void)
{
	b2WorldDef def = b2DefaultWorldDef();
	def.gravity = (b2Vec2){ 0.0f, -10.0f };
	def.enableSleep = false;
	return b2CreateWorld( &def );
}

static b2BodyId add_box(b2WorldId world, b2BodyType type, float x, float y, float hx, float hy, float friction)
{
	b2BodyDef bd = b2DefaultBodyDef();
	bd.type = type;
	bd.position = (b2Vec2){ x, y };
	b2BodyId body = b2CreateBody( world, &bd );
	b2ShapeDef sd = b2DefaultShapeDef();
	sd.density = 1.0f;
	sd.material.friction = friction;
	b2Polygon shape = b2MakeBox( hx, hy );
	b2CreatePolygonShape( body, &sd, &shape );
	return body;
}

static int stack(int n, int seconds)
{
	b2WorldId world = make_world();
	add_box( world, b2_staticBody, 0.0f, -1.0f, 20.0f, 1.0f, 0.6f );
	b2BodyId* boxes = malloc( sizeof( b2BodyId ) * n );
	for ( int i = 0; i < n; ++i )
		boxes[i] = add_box( world, b2_dynamicBody, 0.0f, 0.5f + i, 0.5f, 0.5f, 0.6f );
	for ( int k = 1; k <= 60 * seconds; ++k )
	{
		b2World_Step( world, 1.0f / 60.0f, 4 );
		if ( k % 60 == 0 )
		{
			float lean = 0.0f;
			for ( int i = 0; i < n; ++i )
				lean = fmaxf( lean, fabsf( b2Body_GetPosition( boxes[i] ).x ) );
			printf( "%d %.6f %.6f\n", k / 60, lean, b2Body_GetPosition( boxes[n - 1] ).y );
		}
	}
	free( boxes );
	return 0;
}

static int pyramid(void)
{
	int base = 100;
	b2WorldId world = make_world();
	add_box( world, b2_staticBody, 0.0f, -1.0f, 100.0f, 1.0f, 0.6f );
	b2BodyId* boxes = malloc( sizeof( b2BodyId ) * base * ( base + 1 ) / 2 );
	int n = 0;
	for ( int i = 0; i < base; ++i )
		for ( int j = i; j < base; ++j )
			boxes[n++] = add_box( world, b2_dynamicBody, ( i + 1.0f ) * 0.5f + ( j - i ) - 0.5f * base, i + 0.5f, 0.5f,
								  0.5f, 0.6f );
	double sum = 0.0;
	int samples = 0;
	for ( int k = 1; k <= 400; ++k )
	{
		b2World_Step( world, 1.0f / 60.0f, 4 );
		if ( k >= 250 )
		{
			double speed = 0.0;
			for ( int i = 0; i < n; ++i )
			{
				b2Vec2 v = b2Body_GetLinearVelocity( boxes[i] );
				speed += sqrt( v.x * v.x + v.y * v.y );
			}
			sum += speed / n;
			samples += 1;
		}
	}
	printf( "%.6f\n", sum / samples );
	free( boxes );
	return 0;
}

int main(int argc, char** argv)
{
	if ( argc >= 4 && strcmp( argv[1], "stack" ) == 0 )
		return stack( atoi( argv[2] ), atoi( argv[3] ) );
	if ( argc >= 2 && strcmp( argv[1], "pyramid" ) == 0 )
		return pyramid();
	fprintf( stderr, "usage: settle_probe stack N SECONDS | pyramid\n" );
	return 2;
}
