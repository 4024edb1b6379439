/*
 * hiredis (Debian's libhiredis-dev) for Swift: its synchronous API. Only AppShellSessions imports it.
 */
#ifndef APPSHELL_CHIREDIS_SHIM_H
#define APPSHELL_CHIREDIS_SHIM_H

#include <hiredis/hiredis.h>

#endif
