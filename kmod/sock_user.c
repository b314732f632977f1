// SPDX-License-Identifier: GPL-2.0
/*
 * The table of sockets' last users (sock_user.h has the scheme and its
 * two operations, inline in the fast path).
 */
#include "sock_user.h"

struct magnet_sock_user magnet_sock_users[MAGNET_SOCK_USERS];
