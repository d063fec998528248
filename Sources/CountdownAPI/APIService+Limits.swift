import BlockingIO
import HTTPServer

extension APIService {
    /// Answers with `work`, or `503` with `Retry-After` once `deadline` has passed. Work still running then
    /// (a statement waiting in PostgreSQL) is cancelled and left to finish within the session's
    /// `statement_timeout` / `lock_timeout`; every write is idempotent, so the client may repeat it.
    func withDeadline(_ deadline: Duration, route: Route, _ work: @escaping @Sendable () async -> HTTPResponse) async -> HTTPResponse {
        let response: HTTPResponse? = await withCheckedContinuation { continuation in
            let once = Locked<CheckedContinuation<HTTPResponse?, Never>?>(continuation)
            let worker = Locked<Task<Void, Never>?>(nil)
            let timer = deadlines.add(after: deadline) {
                guard let pending = once.withLock({ $0.take() }) else { return }
                worker.value?.cancel()
                pending.resume(returning: nil)
            }
            let task = Task {
                let response = await work()
                guard let pending = once.withLock({ $0.take() }) else { return }
                self.deadlines.remove(timer)
                pending.resume(returning: response)
            }
            worker.withLock { $0 = task }
        }
        if let response { return response }
        metrics.deadlinesExceeded.increment(labels: route.rawValue)
        logger.warn("request deadline exceeded", ["route": .string(route.rawValue), "seconds": .seconds(deadline)])
        return APIError(.timeout, "the request was not answered within \(deadline.components.seconds) s; it is safe to repeat").response
    }

    /// Refuses a write past the client address's limit.
    func limitAddress(_ request: HTTPRequest) throws(APIError) {
        guard let addressWrites else { return }
        // Every X-Forwarded-For line counts as one list (RFC 9110 §5.3): a proxy that appends a line of its own
        // must not leave the client's earlier line to choose the address.
        let lines = request.headers.values("X-Forwarded-For")
        let address = policy.trustedProxies.clientAddress(
            peer: TrustedProxies.address(ofPeer: request.remoteAddress), forwardedFor: lines.isEmpty ? nil : lines.joined(separator: ","))
        if let wait = addressWrites.acquire(address) { throw rateLimited("address", wait) }
    }

    /// Refuses an unauthenticated device registration past the limit for all anonymous clients together.
    func limitAnonymous() throws(APIError) {
        guard let anonymousWrites else { return }
        if let wait = anonymousWrites.acquire("") { throw rateLimited("anonymous", wait) }
    }

    /// Refuses a write past the user's limit.
    func limitUser(_ caller: Caller) throws(APIError) {
        guard let userWrites else { return }
        if let wait = userWrites.acquire(caller.userID) { throw rateLimited("user", wait) }
    }

    private func rateLimited(_ scope: String, _ wait: Duration) -> APIError {
        metrics.rateLimited.increment(labels: scope)
        let (whole, fraction) = wait.components
        let seconds = max(1, Int(whole) + (fraction > 0 ? 1 : 0))
        let from = scope == "anonymous" ? "without a bearer token" : "from this \(scope)"
        return APIError(.rateLimited, "too many writes \(from); retry in \(seconds) s", retryAfterSeconds: seconds)
    }
}
