import CMicroHTTPD
import Foundation
import Synchronization

/// What the daemon's callbacks reach: the handler, the body limit, and the connections suspended while
/// an async handler runs.
///
/// Async and deferring handlers use suspend/resume: the daemon thread suspends the connection and returns at
/// once, the handler runs as a task (or answers later through its responder), and its reply resumes the
/// connection, whose thread then sends it. No daemon thread
/// waits for a handler, so slow handlers (added latency, awaited I/O) never hold up other connections.
final class RequestDispatcher: @unchecked Sendable {
    enum Handler: Sendable {
        case immediate(@Sendable (HTTPRequest) -> HTTPResponse)
        case suspending(@Sendable (HTTPRequest) async -> HTTPResponse)
        case deferring(@Sendable (HTTPRequest, HTTPResponder) -> Void)
    }

    let handler: Handler
    let maxBodyBytes: Int
    let maxHeaderBytes: Int?
    let errorResponse: @Sendable (Int, String) -> HTTPResponse
    let strictFraming: Bool
    let overloadThreshold: Int?
    /// Connections open now (the daemon's connection notifications).
    private let openConnections = Atomic<Int>(0)
    let watchdog: RequestDeadlineWatchdog?
    private let condition = NSCondition()
    private var stopping = false  // guarded by condition
    private var parked: [ObjectIdentifier: RequestContext] = [:]  // suspended or resumed but not re-entered

    init(handler: Handler, configuration: HTTPServerConfiguration) {
        self.handler = handler
        maxBodyBytes = configuration.maxBodyBytes
        maxHeaderBytes = configuration.maxHeaderBytes
        errorResponse = configuration.errorResponse
        strictFraming = configuration.strictFraming
        overloadThreshold = configuration.overloadThreshold
        watchdog = configuration.requestDeadline.map { RequestDeadlineWatchdog(deadline: $0, exceeded: configuration.requestDeadlineExceeded) }
    }

    deinit { watchdog?.stop() }

    /// One call of the access handler; see `MHD_AccessHandlerCallback`.
    func handle(
        connection: OpaquePointer, url: UnsafePointer<CChar>, method: UnsafePointer<CChar>,
        uploadData: UnsafePointer<CChar>?, uploadDataSize: UnsafeMutablePointer<Int>, slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let stored = slot.pointee else {
            let context = RequestContext(connection: connection, method: String(cString: method), path: String(cString: url))
            slot.pointee = Unmanaged.passRetained(context).toOpaque()
            if let maxHeaderBytes, Self.headerBytes(context.headerFields()) > maxHeaderBytes {
                return answerAndClose(context, 431, "the request headers are larger than \(maxHeaderBytes) bytes")
            }
            if let overloadThreshold, openConnections.load(ordering: .relaxed) > overloadThreshold {
                return answerAndClose(context, 503, "the server is at its connection limit; retry shortly")
            }
            if strictFraming, let problem = FramingCheck(fields: context.headerFields()).problem {
                return answerAndClose(context, 400, problem)
            }
            if let length = MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length"),
                let declared = Int(String(cString: length)), declared > maxBodyBytes {
                // A body within the allowance is read and dropped before the 413: answered at once, a client still
                // sending would often see its connection reset instead of the answer. A larger one is not read.
                guard declared <= maxBodyBytes + Self.discardAllowance else {
                    context.answeredEarly = true
                    return Self.queue(payloadTooLarge(), on: connection)
                }
                context.bodyTooLarge = true
            }
            return .YES
        }
        let context = Unmanaged<RequestContext>.fromOpaque(stored).takeUnretainedValue()
        if let reply = takeReply(context) {
            return Self.queue(reply, on: connection)
        }
        if uploadDataSize.pointee > 0 {
            let count = uploadDataSize.pointee
            uploadDataSize.pointee = 0
            if context.answeredEarly { return .YES }
            if context.bodyTooLarge {
                // A chunked body has no declared length: the daemon only lets the 413 out once the request has
                // been read, so the rest is discarded, and a sender that goes on much longer is cut off.
                context.discarded += count
                return context.discarded > maxBodyBytes + Self.discardAllowance ? .NO : .YES
            }
            guard context.body.count + count <= maxBodyBytes else {
                context.bodyTooLarge = true
                context.discarded = context.body.count + count
                context.body = Data()
                return .YES
            }
            if let uploadData { context.body.append(UnsafeRawPointer(uploadData).assumingMemoryBound(to: UInt8.self), count: count) }
            return .YES
        }
        if context.answeredEarly { return .YES }
        watchdog?.requestReceived(connection)
        if context.bodyTooLarge { return Self.queue(payloadTooLarge(), on: connection) }
        switch handler {
        case .immediate(let respond):
            return Self.queue(respond(context.makeRequest()), on: connection)
        case .suspending(let respond):
            let request = context.makeRequest()
            if park(context) { Task { [self] in finish(context, with: await respond(request)) } }
            return .YES
        case .deferring(let respond):
            let request = context.makeRequest()
            if park(context) { respond(request, HTTPResponder { [self] reply in finish(context, with: reply) }) }
            return .YES
        }
    }

    /// The daemon finished with a request (answered, failed or shut down).
    func completed(_ context: RequestContext) {
        watchdog?.requestCompleted(context.connection)
        condition.lock()
        if parked.removeValue(forKey: ObjectIdentifier(context)) != nil { condition.broadcast() }
        condition.unlock()
    }

    /// Refuses new async work, answers every suspended request `503`, and waits (bounded) until the daemon
    /// has taken them all back, so it can be stopped with no connection left suspended.
    func drain(timeout: Duration) {
        condition.lock()
        stopping = true
        var toResume: [OpaquePointer] = []
        for context in parked.values where context.phase == .suspended {
            context.phase = .resumed
            context.reply = errorResponse(503, "the server is stopping")
            toResume.append(context.connection)
        }
        condition.unlock()
        for connection in toResume { MHD_resume_connection(connection) }
        let deadline = Date().addingTimeInterval(Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        condition.lock()
        while !parked.isEmpty && condition.wait(until: deadline) {}
        condition.unlock()
    }

    /// Suspends the request's connection until `finish`; false (and the request answered 503) while stopping.
    private func park(_ context: RequestContext) -> Bool {
        MHD_suspend_connection(context.connection)
        condition.lock()
        let refused = stopping
        context.phase = .suspended
        parked[ObjectIdentifier(context)] = context
        condition.unlock()
        if refused { finish(context, with: errorResponse(503, "the server is stopping")) }
        return !refused
    }

    /// Hands a reply to a suspended request and resumes it, unless a drain already answered it.
    private func finish(_ context: RequestContext, with reply: HTTPResponse) {
        condition.lock()
        let resume = context.phase == .suspended
        if resume {
            context.phase = .resumed
            context.reply = reply
        }
        condition.unlock()
        if resume { MHD_resume_connection(context.connection) }
    }

    private func takeReply(_ context: RequestContext) -> HTTPResponse? {
        condition.lock()
        defer { condition.unlock() }
        guard context.phase == .resumed, let reply = context.reply else { return nil }
        context.reply = nil
        context.phase = .receiving
        if parked.removeValue(forKey: ObjectIdentifier(context)) != nil { condition.broadcast() }
        return reply
    }

    /// Answers a request before its body is read, with `Connection: close` (what follows is dropped).
    private func answerAndClose(_ context: RequestContext, _ status: Int, _ message: String) -> MHD_Result {
        context.answeredEarly = true
        var response = errorResponse(status, message)
        response.headers["Connection"] = "close"
        return Self.queue(response, on: context.connection)
    }

    /// Bytes past the limit read (and dropped) from a chunked body before the connection is closed.
    static let discardAllowance = 1 << 20

    func payloadTooLarge() -> HTTPResponse {
        var response = errorResponse(413, "the request body is larger than \(maxBodyBytes) bytes")
        response.headers["Connection"] = "close"
        return response
    }

    /// A connection opened or closed (the daemon's connection notifications): counted, and told to the watchdog.
    func connection(_ connection: OpaquePointer, started: Bool) {
        openConnections.add(started ? 1 : -1, ordering: .relaxed)
        guard let watchdog else { return }
        if started {
            watchdog.connectionStarted(connection, fd: countdown_mhd_connection_fd(connection))
        } else {
            watchdog.connectionClosed(connection)
        }
    }

    /// Bytes of a header block, counted as sent (`name: value\r\n`; a byte that is not UTF-8 counts as the three of
    /// its replacement character).
    static func headerBytes(_ fields: [(name: String, value: String)]) -> Int {
        fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
    }

    /// Queues `response` on the connection; a dropped-connection reply (or any failure) closes it instead.
    static func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
        if response.dropsConnection { return .NO }
        let created = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let created else { return .NO }
        defer { MHD_destroy_response(created) }
        for field in response.headers {
            _ = MHD_add_response_header(created, field.name, field.value)
        }
        return MHD_queue_response(connection, UInt32(clamping: response.status), created)
    }
}
