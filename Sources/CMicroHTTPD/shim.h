/*
 * Adapters that Swift needs to use libmicrohttpd.
 *
 * MHD_start_daemon, MHD_get_daemon_info and MHD_get_connection_info take variable arguments,
 * which Swift cannot call, and option items carry function pointers in an intptr_t, which Swift
 * cannot type-check. Each helper here is a prefixed static inline function with fixed, typed
 * parameters. MHD_SIZE_UNKNOWN is a macro Swift does not import.
 */
#ifndef APPSHELL_CMICROHTTPD_SHIM_H
#define APPSHELL_CMICROHTTPD_SHIM_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <netinet/in.h>
#include <sys/epoll.h>   /* event streams watch their sockets (Glibc's module leaves these out) */
#include <sys/eventfd.h>
#include <microhttpd.h>
#include <gnutls/gnutls.h> /* HTTPS: libmicrohttpd's TLS is GnuTLS; certificates are loaded here */
#include <gnutls/x509.h>

/** Content length for responses whose size is not known in advance (event streams). */
static const uint64_t appshell_mhd_size_unknown = MHD_SIZE_UNKNOWN;

/** Called with the raw request target; the returned pointer becomes the request's `*con_cls`. */
typedef void *(*appshell_mhd_uri_log_callback)(void *cls, const char *uri,
                                                 struct MHD_Connection *connection);

/** Called with each of libmicrohttpd's own messages, formatted, without its line break. */
typedef void (*appshell_mhd_message_callback)(const char *message);

/**
 * libmicrohttpd's logger (MHD_OPTION_EXTERNAL_LOGGER, called with a format and a va_list, which
 * Swift cannot take): formats the message into a buffer (a longer one is cut at 1023 bytes) and
 * hands it as a plain string to the `appshell_mhd_message_callback` that `cls` is.
 */
static void appshell_mhd_log(void *cls, const char *format, va_list arguments) {
  char message[1024];
  vsnprintf(message, sizeof message, format, arguments);
  size_t length = strlen(message);
  while (length > 0 && (message[length - 1] == '\n' || message[length - 1] == '\r')) {
    message[--length] = '\0';
  }
  ((appshell_mhd_message_callback)cls)(message);
}

/** Everything AppShell passes to MHD_start_daemon, with typed fields. */
struct appshell_mhd_settings {
  unsigned int flags;
  /** The listening socket, made by the caller: every daemon of a server accepts from it. */
  int listen_socket;
  unsigned int connection_limit;
  unsigned int connection_timeout_seconds;
  size_t connection_memory_limit;
  int strict_for_client;
  MHD_AcceptPolicyCallback accept_policy;
  MHD_AccessHandlerCallback access_handler;
  MHD_RequestCompletedCallback completed_handler;
  appshell_mhd_uri_log_callback uri_log_handler;
  MHD_NotifyConnectionCallback connection_handler;
  /** Receives libmicrohttpd's messages (else they go to standard error as they are). */
  appshell_mhd_message_callback message_handler;
  void *context;
  /** HTTPS: the certificate chain and key (PEM, NUL-terminated, kept by the caller while the
   * daemon runs) and the GnuTLS priority string; all NULL for plain HTTP (then flags must not
   * have MHD_USE_TLS). */
  const char *tls_certificate;
  const char *tls_key;
  const char *tls_priorities;
};

/** Starts a daemon from `settings`; returns NULL when libmicrohttpd refuses (see stderr). */
static inline struct MHD_Daemon *appshell_mhd_start(const struct appshell_mhd_settings *settings) {
  struct MHD_OptionItem options[16];
  int n = 0;
  /* First: libmicrohttpd warns on standard error when another option comes before it. */
  if (settings->message_handler) {
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)appshell_mhd_log,
                                           (void *)settings->message_handler};
  }
  options[n++] = (struct MHD_OptionItem){MHD_OPTION_LISTEN_SOCKET, settings->listen_socket, NULL};
  options[n++] =
      (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, settings->connection_limit, NULL};
  options[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT,
                                         settings->connection_timeout_seconds, NULL};
  options[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                                         (intptr_t)settings->connection_memory_limit, NULL};
  options[n++] =
      (struct MHD_OptionItem){MHD_OPTION_STRICT_FOR_CLIENT, settings->strict_for_client, NULL};
  options[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED,
                                         (intptr_t)settings->completed_handler, settings->context};
  options[n++] = (struct MHD_OptionItem){MHD_OPTION_URI_LOG_CALLBACK,
                                         (intptr_t)settings->uri_log_handler, settings->context};
  options[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION,
                                         (intptr_t)settings->connection_handler, settings->context};
  if (settings->tls_certificate && settings->tls_key) {
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0,
                                           (void *)settings->tls_certificate};
    options[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)settings->tls_key};
    if (settings->tls_priorities) {
      options[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0,
                                             (void *)settings->tls_priorities};
    }
  }
  options[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
  return MHD_start_daemon(settings->flags, 0, settings->accept_policy, settings->context,
                          settings->access_handler, settings->context, MHD_OPTION_ARRAY, options,
                          MHD_OPTION_END);
}

/** The daemon's epoll descriptor (a daemon run by the caller's loop), or -1. */
static inline int appshell_mhd_epoll_fd(struct MHD_Daemon *daemon) {
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_EPOLL_FD);
  return info ? info->epoll_fd : -1;
}

/** The connection's socket context (set when libmicrohttpd reported it started), or NULL. */
static inline void *appshell_mhd_socket_context(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return info ? info->socket_context : NULL;
}

/** The peer's socket address, or NULL. */
static inline const struct sockaddr *appshell_mhd_client_address(
    struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  return info ? info->client_addr : NULL;
}

/** Sets `flags` on a response (MHD_set_response_options takes variable arguments). */
static inline enum MHD_Result appshell_mhd_set_response_flags(struct MHD_Response *response,
                                                              enum MHD_ResponseFlags flags) {
  return MHD_set_response_options(response, flags, MHD_RO_END);
}

/** The connection's socket, or -1 (event streams watch it for the client hanging up). */
static inline int appshell_mhd_connection_fd(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  return info ? info->connect_fd : -1;
}

/** The request's header section in bytes, request line and empty line included, or 0 (too early). */
static inline size_t appshell_mhd_header_size(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
  return info ? info->header_size : 0;
}

/** Shuts both directions of a connection's socket down (libmicrohttpd then sees its end and
 * closes the connection). In C: Glibc's module does not export SHUT_RDWR on every build. */
static inline int appshell_shutdown_socket(int fd) { return shutdown(fd, SHUT_RDWR); }

/** Frees what GnuTLS allocated (gnutls_free is a variable holding a function: Swift cannot call it). */
static inline void appshell_gnutls_free(void *pointer) { gnutls_free(pointer); }

/**
 * Makes a new TLS connection present `credentials` (a certificate reloaded since the daemon
 * started) instead of the daemon's own: called when libmicrohttpd reports the connection started,
 * before its handshake. The credentials must outlive the connection's TLS session. Returns 0, or
 * -1 when the connection has no TLS session.
 */
static inline int appshell_mhd_use_tls_credentials(struct MHD_Connection *connection,
                                                   gnutls_certificate_credentials_t credentials) {
  const union MHD_ConnectionInfo *info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
  if (!info || !info->tls_session) return -1;
  return gnutls_credentials_set((gnutls_session_t)info->tls_session, GNUTLS_CRD_CERTIFICATE,
                                credentials) == GNUTLS_E_SUCCESS
             ? 0
             : -1;
}

#endif
