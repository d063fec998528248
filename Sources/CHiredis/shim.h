#ifndef COUNTDOWN_CHIREDIS_SHIM_H
#define COUNTDOWN_CHIREDIS_SHIM_H
#include <hiredis/hiredis.h>
#endif
