/* Version stamps for what devices keep copies of (the map, the allocation,
 * the QMC randomizations).  One counter for the whole process: a stamp is
 * never given twice, so a device that compares stamps alone cannot mistake
 * a new object for an old one, not even one allocated where a freed one
 * was. */
#ifndef STRATA_STAMP_H
#define STRATA_STAMP_H
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
uint64_t strata_stamp_next(void);
#ifdef __cplusplus
}
#endif
#endif
