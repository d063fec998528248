#ifndef COUNTDOWN_CCURL_SHIM_H
#define COUNTDOWN_CCURL_SHIM_H
#include <curl/curl.h>

/* curl_easy_setopt / curl_multi_setopt / curl_easy_getinfo are variadic; Swift cannot call them directly. */
static inline CURLcode countdown_curl_easy_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode countdown_curl_easy_setopt_ptr(CURL *h, CURLoption o, const void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode countdown_curl_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode countdown_curl_easy_setopt_write(CURL *h, size_t (*f)(char *, size_t, size_t, void *)) { return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, f); }
static inline CURLcode countdown_curl_easy_setopt_header(CURL *h, size_t (*f)(char *, size_t, size_t, void *)) { return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, f); }
static inline CURLMcode countdown_curl_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }
static inline CURLcode countdown_curl_easy_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode countdown_curl_easy_getinfo_ptr(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode countdown_curl_easy_getinfo_double(CURL *h, CURLINFO i, double *v) { return curl_easy_getinfo(h, i, v); }

/* The socket interface (curl_multi_socket_action): libcurl says which sockets to watch and when to time out. */
typedef int (*countdown_curl_socket_callback)(CURL *easy, curl_socket_t socket, int what, void *data, void *socket_data);
typedef int (*countdown_curl_timer_callback)(CURLM *multi, long timeout_ms, void *data);
static inline CURLMcode countdown_curl_multi_setopt_socket(CURLM *m, countdown_curl_socket_callback f, void *data) {
    CURLMcode code = curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, f);
    return code != CURLM_OK ? code : curl_multi_setopt(m, CURLMOPT_SOCKETDATA, data);
}
static inline CURLMcode countdown_curl_multi_setopt_timer(CURLM *m, countdown_curl_timer_callback f, void *data) {
    CURLMcode code = curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, f);
    return code != CURLM_OK ? code : curl_multi_setopt(m, CURLMOPT_TIMERDATA, data);
}

/* Sockets opened and closed through the application, so it sees the whole life of each connection's socket. */
typedef curl_socket_t (*countdown_curl_opensocket_callback)(void *data, curlsocktype purpose, struct curl_sockaddr *address);
typedef int (*countdown_curl_closesocket_callback)(void *data, curl_socket_t socket);
static inline CURLcode countdown_curl_easy_setopt_sockets(CURL *h, countdown_curl_opensocket_callback open,
                                                          countdown_curl_closesocket_callback close, void *data) {
    CURLcode code = curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, open);
    if (code == CURLE_OK) code = curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, data);
    if (code == CURLE_OK) code = curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, close);
    if (code == CURLE_OK) code = curl_easy_setopt(h, CURLOPT_CLOSESOCKETDATA, data);
    return code;
}

/* epoll for the socket interface. struct epoll_event is packed on x86-64, so Swift gets plain values instead. */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <errno.h>
static inline int countdown_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }
static inline int countdown_epoll_ctl(int epoll, int op, int fd, unsigned int events) {
    struct epoll_event event = { .events = events, .data = { .fd = fd } };
    return epoll_ctl(epoll, op, fd, &event);
}
/* Waits like epoll_wait and writes each ready descriptor and its events to fds[i] / events[i]. */
static inline int countdown_epoll_wait(int epoll, int *fds, unsigned int *events, int capacity, int timeout_ms) {
    struct epoll_event ready[128];
    if (capacity > 128) capacity = 128;
    int count = epoll_wait(epoll, ready, capacity, timeout_ms);
    for (int i = 0; i < count; i++) { fds[i] = ready[i].data.fd; events[i] = ready[i].events; }
    return count;
}
#endif
