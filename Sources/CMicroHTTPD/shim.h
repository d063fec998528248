#ifndef COUNTDOWN_CMICROHTTPD_SHIM_H
#define COUNTDOWN_CMICROHTTPD_SHIM_H
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <microhttpd.h>

/* MHD_start_daemon and MHD_get_connection_info are variadic, which Swift cannot call: these
   fixed-signature wrappers are how the Swift side reaches them. */

/* Starts a daemon on an already listening socket. `options` is an MHD_OPTION_END-terminated array of
   integer-valued options (limits, timeouts, pool size); the completion callback is passed separately
   because it is a function pointer. */
static inline struct MHD_Daemon *countdown_mhd_start(unsigned int flags,
                                                     MHD_socket listen_socket,
                                                     MHD_AccessHandlerCallback handler,
                                                     void *handler_context,
                                                     MHD_RequestCompletedCallback completed,
                                                     void *completed_context,
                                                     MHD_NotifyConnectionCallback notify,
                                                     void *notify_context,
                                                     struct MHD_OptionItem *options) {
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_context,
                            MHD_OPTION_LISTEN_SOCKET, listen_socket,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
                            MHD_OPTION_NOTIFY_CONNECTION, notify, notify_context,
                            MHD_OPTION_ARRAY, options,
                            MHD_OPTION_END);
}

/* The socket of a connection, or -1. */
static inline int countdown_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/* The peer address of a connection, or NULL. */
static inline const struct sockaddr *countdown_mhd_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

#endif
