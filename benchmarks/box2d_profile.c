// Box2D v3's own profile of one of its benchmark scenes (benchmarks/box2d_profile.py): the scene made by Box2D's
// shared/benchmarks.c as its benchmark app makes it (default world, continuous on, one worker, no task system,
// 1/60 s steps of 4 substeps, the scene's step function before each step), then the mean over the steps after
// the first of each b2Profile field (ms), and the wall time per step, scene function included.
//
//     box2d_profile NAME STEPS
#include "box2d/box2d.h"
#include "benchmarks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms( void )
{
	struct timespec t;
	clock_gettime( CLOCK_MONOTONIC, &t );
	return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

// b2Profile's fields, in their order (all float)
static const char* FIELDS[] = { "step", "pairs", "collide", "solve", "solverSetup", "constraints", "prepareConstraints",
	"integrateVelocities", "warmStart", "solveImpulses", "integratePositions", "relaxImpulses", "applyRestitution",
	"storeImpulses", "splitIslands", "transforms", "sensorHits", "jointEvents", "hitEvents", "refit", "bullets",
	"sleepIslands", "sensors" };

int main( int argc, char** argv )
{
	if ( argc != 3 )
	{
		fprintf( stderr, "usage: box2d_profile NAME STEPS\n" );
		return 2;
	}
	const char* name = argv[1];
	int steps = atoi( argv[2] );
	int fields = (int)( sizeof( b2Profile ) / sizeof( float ) );
	if ( fields != (int)( sizeof( FIELDS ) / sizeof( FIELDS[0] ) ) || steps < 2 )
	{
		fprintf( stderr, "box2d_profile: b2Profile has %d fields, or too few steps\n", fields );
		return 2;
	}
	b2WorldDef def = b2DefaultWorldDef();
	def.workerCount = 1;
	b2WorldId world = b2CreateWorld( &def );
	float ( *stepFcn )( b2WorldId, int ) = NULL;
	if ( strcmp( name, "joint_grid" ) == 0 )
		CreateJointGrid( world );
	else if ( strcmp( name, "large_pyramid" ) == 0 )
		CreateLargePyramid( world );
	else if ( strcmp( name, "many_pyramids" ) == 0 )
		CreateManyPyramids( world );
	else if ( strcmp( name, "rain" ) == 0 )
	{
		CreateRain( world );
		stepFcn = StepRain;
	}
	else if ( strcmp( name, "smash" ) == 0 )
		CreateSmash( world );
	else if ( strcmp( name, "spinner" ) == 0 )
	{
		CreateSpinner( world );
		stepFcn = StepSpinner;
	}
	else if ( strcmp( name, "tumbler" ) == 0 )
		CreateTumbler( world );
	else
	{
		fprintf( stderr, "box2d_profile: no scene %s\n", name );
		return 2;
	}
	double sum[64] = { 0 };
	double start = 0.0;
	for ( int i = 0; i < steps; ++i )
	{
		if ( i == 1 )
			start = now_ms();
		if ( stepFcn != NULL )
			stepFcn( world, i );
		b2World_Step( world, 1.0f / 60.0f, 4 );
		if ( i >= 1 )
		{
			b2Profile p = b2World_GetProfile( world );
			const float* f = (const float*)&p;
			for ( int k = 0; k < fields; ++k )
				sum[k] += f[k];
		}
	}
	printf( "wall %.6f\n", ( now_ms() - start ) / ( steps - 1 ) );
	for ( int k = 0; k < fields; ++k )
		printf( "%s %.6f\n", FIELDS[k], sum[k] / ( steps - 1 ) );
	b2DestroyWorld( world );
	return 0;
}
