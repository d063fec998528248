/// Told once for a message of a batch (its index in the batch) as its final answer arrives, possibly on the HTTP
/// client's thread: keep it quick.
public typealias PushAnswerHook = @Sendable (_ index: Int) -> Void

/// Sends pushes, always as a batch (one message is a batch of one). Never throws: every outcome, including
/// transport failures, is a classified `PushResult`.
public protocol PushTransport: Sendable {
    /// Sends every message concurrently and returns the results in order once all are in. Transports that can
    /// (FCM, APNs) hand the whole batch to the HTTP client at once, which wakes the caller once per batch.
    /// `onAnswer` is called at most once per message, as its final answer arrives (possibly never, for a message
    /// refused before it is sent; never for an answer that makes the transport send the message again), so the
    /// caller can free what each message held before the slowest one is answered.
    func sendAll(_ messages: [PushMessage], onAnswer: PushAnswerHook?) async -> [PushResult]
}

extension PushTransport {
    public func sendAll(_ messages: [PushMessage]) async -> [PushResult] {
        await sendAll(messages, onAnswer: nil)
    }

    /// Sends `message` as a batch of one.
    public func send(_ message: PushMessage) async -> PushResult {
        await sendAll([message], onAnswer: nil)[0]
    }
}
