import CCurl
import Glibc

/// The connection sockets libcurl opens and closes through the engine (`CURLOPT_OPENSOCKETFUNCTION`,
/// `CURLOPT_CLOSESOCKETFUNCTION`). The engine sees the whole life of each, so an idle connection's socket may stay
/// in the epoll set between transfers (`EventPoller.park`) without a closed descriptor's number, reused by a new
/// socket, being taken for the old one. Other descriptors libcurl asks to watch (its resolver's) come and go as
/// before.
///
/// Owned by the multi handle (`CurlMulti`), so it and its poller outlive every connection: `curl_multi_cleanup`
/// closes the cached ones through it. Touched only on the engine's thread, and by that cleanup.
final class SocketRegistry {
    let poller: EventPoller
    private var owned = Set<Int32>()

    init(poller: EventPoller) {
        self.poller = poller
    }

    /// Whether `fd` is a connection socket opened here and not yet closed.
    func owns(_ fd: Int32) -> Bool { owned.contains(fd) }

    /// A socket as libcurl's own would be, but close-on-exec; -1 (`CURL_SOCKET_BAD`) when `socket` fails.
    func open(family: Int32, type: Int32, protocol: Int32) -> Int32 {
        let fd = socket(family, type | Int32(SOCK_CLOEXEC.rawValue), `protocol`)
        if fd >= 0 { owned.insert(fd) }
        return fd
    }

    /// Takes `fd` out of the epoll set (parked or watched) before closing it.
    func close(_ fd: Int32) -> Int32 {
        if owned.remove(fd) != nil { poller.forget(fd) }
        return Glibc.close(fd)
    }

    /// Sets `easy` to open and close its connections' sockets here.
    func install(on easy: CurlEasy) throws {
        let context = UnsafeMutableRawPointer(Unmanaged.passUnretained(self).toOpaque())
        try Curl.check(countdown_curl_easy_setopt_sockets(easy.handle, { context, _, address in
            guard let context, let address else { return CURL_SOCKET_BAD }
            return Unmanaged<SocketRegistry>.fromOpaque(context).takeUnretainedValue().open(
                family: address.pointee.family, type: address.pointee.socktype, protocol: address.pointee.protocol)
        }, { context, fd in
            guard let context else { return Glibc.close(fd) }
            return Unmanaged<SocketRegistry>.fromOpaque(context).takeUnretainedValue().close(fd)
        }, context), "setting the socket open and close callbacks")
    }
}
