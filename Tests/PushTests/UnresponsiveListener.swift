import Glibc

/// A loopback port whose accept queue is full, so new connection attempts hang until they time out.
final class UnresponsiveListener {
    let port: Int
    private var descriptors: [Int32] = []

    init() {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                precondition(bind(listener, raw, length) == 0 && listen(listener, 0) == 0)
                precondition(getsockname(listener, raw, &length) == 0)
            }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        descriptors.append(listener)
        // Fill the (backlog + 1) accept queue with connections nobody accepts.
        for _ in 0..<2 {
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = connect(client, $0, length) }
            }
            descriptors.append(client)
        }
        usleep(50_000)
    }

    deinit { for descriptor in descriptors { close(descriptor) } }
}
