#ifndef COUNTDOWN_COPENSSL_SHIM_H
#define COUNTDOWN_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/err.h>
#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/rsa.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/bn.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/ssl.h>

/* SSL_set_tlsext_host_name is a macro Swift cannot call. */
static inline int countdown_ssl_set_server_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

/* SSL_CTX_set_min_proto_version is a macro too. */
static inline int countdown_ssl_ctx_require_tls12(SSL_CTX *context) {
    return (int)SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
}

/* Empties this thread's OpenSSL error queue into `buffer` as "message; message" (truncated to fit). */
static inline void countdown_openssl_drain_errors(char *buffer, size_t size) {
    size_t used = 0;
    unsigned long error;
    if (size == 0) return;
    buffer[0] = 0;
    while ((error = ERR_get_error()) != 0) {
        if (used > 0 && used + 2 < size) { buffer[used++] = ';'; buffer[used++] = ' '; buffer[used] = 0; }
        if (used + 1 < size) ERR_error_string_n(error, buffer + used, size - used);
        while (used < size && buffer[used] != 0) used++;
    }
}
#endif
