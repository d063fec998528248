/// Asks the Sentinels where the primary is (`SENTINEL get-master-addr-by-name`), over the same transport as every
/// other connection (TLS when the URL is `rediss://`).
struct RedisSentinelDiscovery {
    let configuration: RedisConfiguration

    /// The primary's address from the first Sentinel that knows it; one line listing every Sentinel's failure
    /// otherwise.
    func primary(deadline: ContinuousClock.Instant) throws -> (host: String, port: Int) {
        guard let sentinel = configuration.sentinel else { return (configuration.host, configuration.port) }
        var failures: [String] = []
        var misconfigured: String?
        for endpoint in sentinel.sentinels {
            do {
                return try ask(endpoint, sentinel: sentinel, deadline: deadline)
            } catch let error as RedisError {
                failures.append("\(endpoint.host):\(endpoint.port): \(error.message)")
                misconfigured = misconfigured ?? error.misconfigured
            }
        }
        // A Sentinel that answers but does not know the master, refuses the password or is not trusted says the
        // settings are wrong; Sentinels that cannot be reached may be away for a moment.
        throw RedisError(
            .connectionFailed, "no Sentinel knows the primary of \"\(sentinel.masterName)\" (\(failures.joined(separator: "; ")))",
            context: "REDIS_SENTINELS", misconfigured: misconfigured)
    }

    private func ask(_ endpoint: RedisSentinel.Endpoint, sentinel: RedisSentinel, deadline: ContinuousClock.Instant) throws -> (host: String, port: Int) {
        let transport = try RedisTransport(host: endpoint.host, port: endpoint.port, tls: configuration.tls, deadline: deadline)
        var commands: [[RedisArgument]] = []
        if let password = sentinel.password { commands.append(["AUTH", RedisArgument(password)]) }
        commands.append(["SENTINEL", "get-master-addr-by-name", RedisArgument(sentinel.masterName)])
        let replies = try transport.exchange(commands, deadline: deadline, message: "no answer", context: "SENTINEL")
        if sentinel.password != nil, case .error(let message) = replies[0] {
            throw RedisError(.authenticationFailed, "\(message) (check REDIS_SENTINEL_PASSWORD)", context: "SENTINEL",
                             misconfigured: "REDIS_SENTINEL_PASSWORD")
        }
        let answer = try replies[replies.count - 1].throwIfError(context: "SENTINEL")
        guard let pair = answer.array, pair.count == 2, let host = pair[0].string, let port = pair[1].integer.map(Int.init) else {
            throw RedisError(.unexpectedReply, "does not know master \"\(sentinel.masterName)\" (check REDIS_SENTINEL_MASTER)", context: "SENTINEL",
                             misconfigured: "REDIS_SENTINEL_MASTER")
        }
        return (host, port)
    }

    /// Throws unless `ROLE` says the server is a primary (a stale Sentinel answer during a failover).
    static func requirePrimary(_ role: RedisReply, at target: String) throws {
        guard role.array?.first?.string == "master" else {
            throw RedisError(.readOnly, "the server the Sentinels named is not the primary (failover in progress)", context: target)
        }
    }
}
