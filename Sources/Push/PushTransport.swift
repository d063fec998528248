import BlockingIO

/// Told once for a message of a batch as its answer arrives, possibly on the HTTP client's thread: keep it quick.
public typealias PushAnswerHook = @Sendable () -> Void

/// Sends pushes. Never throws: every outcome, including transport failures, is a classified `PushResult`.
public protocol PushTransport: Sendable {
    func send(_ message: PushMessage) async -> PushResult

    /// Sends every message concurrently and returns the results in order once all are in. Transports that can
    /// (FCM, APNs) hand the whole batch to the HTTP client at once, which wakes the caller once per batch.
    /// `onAnswer` is called at most once per message as its answer arrives (possibly never, for a message refused
    /// before it is sent), so the caller can free what each message held before the slowest one is answered.
    func sendAll(_ messages: [PushMessage], onAnswer: PushAnswerHook?) async -> [PushResult]
}

extension PushTransport {
    public func sendAll(_ messages: [PushMessage]) async -> [PushResult] {
        await sendAll(messages, onAnswer: nil)
    }

    /// One `send` per message, concurrently.
    public func sendAll(_ messages: [PushMessage], onAnswer: PushAnswerHook?) async -> [PushResult] {
        await messages.concurrentMap { message in
            defer { onAnswer?() }
            return await send(message)
        }
    }

    /// Sends `messages` with at most `concurrency` in flight (`PUSH_CONCURRENCY`); results come back in input order.
    public func send(_ messages: [PushMessage], concurrency: Int) async -> [PushResult] {
        precondition(concurrency > 0, "concurrency must be positive")
        var results = [PushResult?](repeating: nil, count: messages.count)
        await withTaskGroup(of: (Int, PushResult).self) { group in
            var next = 0
            func startNext() {
                guard next < messages.count else { return }
                let index = next
                next += 1
                group.addTask { (index, await self.send(messages[index])) }
            }
            for _ in 0..<min(concurrency, messages.count) { startNext() }
            while let (index, result) = await group.next() {
                results[index] = result
                startNext()
            }
        }
        return results.map { $0! }
    }
}
