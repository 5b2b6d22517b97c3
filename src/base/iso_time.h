/* Times as people and scripts read them: ISO 8601, UTC, to the second. */
#ifndef RS_ISO_TIME_H
#define RS_ISO_TIME_H

#include <time.h>

#define RS_ISO_TIME_MAX 32

/* "2026-12-04T13:37:02Z" */
void rs_iso_time(time_t t, char out[RS_ISO_TIME_MAX]);

#endif
