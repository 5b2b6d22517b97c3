#include "base/iso_time.h"

void rs_iso_time(time_t t, char out[RS_ISO_TIME_MAX])
{
    struct tm tm;

    out[0] = '\0';
    if (gmtime_r(&t, &tm))
        strftime(out, RS_ISO_TIME_MAX, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
