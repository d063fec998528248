/// One open connection's bytes and parser: a socket (with TLS over it for `rediss://`) and a RESP reader.
///
/// The same code path serves plain and TLS connections, commands and subscriptions alike.
final class RedisTransport {
    enum Awaited {
        case reply(RedisReply)
        case timedOut
        case interrupted
    }

    private let stream: any RedisByteStream
    private let reader: RedisReplyReader
    private var buffer = [UInt8](repeating: 0, count: 16 * 1024)
    /// `host:port`, for error context.
    let endpoint: String

    /// Connects to `host:port` before `deadline`, handshaking TLS when `tls` is set.
    init(host: String, port: Int, tls: RedisTLS?, deadline: ContinuousClock.Instant) throws {
        let socket = try RedisSocket(host: host, port: port, deadline: deadline)
        endpoint = socket.endpoint
        if let tls {
            stream = try RedisTLSSession(socket: socket, settings: tls, serverName: tls.serverName ?? host, deadline: deadline)
        } else {
            stream = socket
        }
        reader = try RedisReplyReader()
    }

    /// Sends the commands in one write.
    func send(_ commands: [[RedisArgument]], deadline: ContinuousClock.Instant) throws {
        var encoded: [UInt8] = []
        for arguments in commands { RedisReplyReader.format(arguments, into: &encoded) }
        try encoded.withUnsafeBytes { try stream.write($0, deadline: deadline) }
    }

    /// Sends the commands in one write and reads one reply each before `deadline`; a missing reply throws
    /// `.timeout` with `message` and `context`.
    func exchange(
        _ commands: [[RedisArgument]], deadline: ContinuousClock.Instant, message: String, context: String
    ) throws -> [RedisReply] {
        try send(commands, deadline: deadline)
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        while replies.count < commands.count {
            guard case .reply(let reply) = try nextReply(deadline: deadline) else {
                throw RedisError(.timeout, message, context: context)
            }
            replies.append(reply)
        }
        return replies
    }

    /// The next reply, waiting until `deadline` (or `interrupt`) for it.
    func nextReply(deadline: ContinuousClock.Instant, interrupt: WakePipe? = nil) throws -> Awaited {
        while true {
            if let reply = try reader.next() { return .reply(reply) }
            let received = try buffer.withUnsafeMutableBytes { try stream.read(into: $0, deadline: deadline, interrupt: interrupt) }
            switch received {
            case .timedOut: return .timedOut
            case .interrupted: return .interrupted
            case .bytes(let count): try buffer.withUnsafeBytes { try reader.feed(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            }
        }
    }

    /// Whether an idle connection is still usable: a RESP2 server sends nothing unprompted unless it closed the
    /// connection (restart, timeout, `CLIENT KILL`). TLS session tickets are consumed here without a reply.
    var isOpenWhileIdle: Bool {
        guard case .timedOut = try? nextReply(deadline: .now) else { return false }
        return true
    }
}
