import BlockingIO

/// A Lua script run with `EVALSHA`: loaded once per client, reloaded when the server forgot it.
public struct RedisScript: Sendable, Hashable {
    /// A short name for errors and logs, e.g. `delayqueue.claim.v1`.
    public let name: String
    public let source: String

    public init(name: String, source: String) {
        self.name = name
        self.source = source
    }

    /// Lua that sets `now` to the Redis `TIME` in milliseconds, for the start of a script's source.
    public static let nowMilliseconds = "local t = redis.call('TIME')\nlocal now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)"
}

/// SHA1 digests of the scripts a client has loaded (shared by all its connections).
final class RedisScriptCache: Sendable {
    private let digests = Locked<[RedisScript: String]>([:])

    func digest(of script: RedisScript) -> String? { digests.withLock { $0[script] } }

    /// `SCRIPT LOAD`s the script on `connection` and remembers its digest.
    func load(_ script: RedisScript, on connection: RedisConnection) throws -> String {
        let reply = try connection.command("SCRIPT", "LOAD", RedisArgument(script.source))
        guard let digest = reply.string else {
            throw RedisError(.unexpectedReply, "SCRIPT LOAD answered \(reply)", context: script.name)
        }
        digests.withLock { $0[script] = digest }
        return digest
    }
}

extension RedisConnection {
    /// Runs `script` once per call in one pipeline; calls that met `NOSCRIPT` are rerun after a reload.
    /// Server error replies are returned in place as `.error`.
    func runPipelined(_ script: RedisScript, calls: [(keys: [RedisArgument], arguments: [RedisArgument])], cache: RedisScriptCache) throws -> [RedisReply] {
        var digest = try cache.digest(of: script) ?? cache.load(script, on: self)
        var replies = try pipeline(calls.map { Self.evalsha(digest, keys: $0.keys, arguments: $0.arguments) })
        let missing = replies.indices.filter { if case .error(let message) = replies[$0] { message.hasPrefix("NOSCRIPT") } else { false } }
        guard !missing.isEmpty else { return replies }
        digest = try cache.load(script, on: self)
        let rerun = try pipeline(missing.map { Self.evalsha(digest, keys: calls[$0].keys, arguments: calls[$0].arguments) })
        for (index, reply) in zip(missing, rerun) { replies[index] = reply }
        return replies
    }

    private static func evalsha(_ digest: String, keys: [RedisArgument], arguments: [RedisArgument]) -> [RedisArgument] {
        var argv: [RedisArgument] = ["EVALSHA", RedisArgument(digest), RedisArgument(keys.count)]
        argv.reserveCapacity(3 + keys.count + arguments.count)
        argv.append(contentsOf: keys)
        argv.append(contentsOf: arguments)
        return argv
    }
}
