#ifndef COUNTDOWN_CLIBPQ_SHIM_H
#define COUNTDOWN_CLIBPQ_SHIM_H
#include <postgresql/libpq-fe.h>
#endif
