import CMicroHTTPD
import Foundation
import Synchronization

/// A small HTTP/1.1 server on libmicrohttpd with its own thread pool.
///
/// Each pool thread runs an event loop (epoll on Linux) over its share of connections, reads the whole
/// request body (up to `maxBodyBytes`) and calls the handler. A synchronous handler runs on that thread and
/// should be quick; an async handler runs as a task while its connection is suspended, so waiting in it
/// never blocks the pool; a deferring handler is handed a responder it may call later, from any thread. The server owns the daemon: `stop()` (or `deinit`) shuts it down and closes the
/// listening socket.
public final class HTTPServer: Sendable {
    /// Answers a request on a server thread; keep it short.
    public typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse
    /// Answers a request asynchronously; may await.
    public typealias AsyncHandler = @Sendable (HTTPRequest) async -> HTTPResponse
    /// Called on a server thread with a responder to answer the request with, now or later from any thread
    /// (the connection is suspended meanwhile); no task is started, so answering costs no thread hand-over of
    /// its own. It must answer every request exactly once.
    public typealias DeferringHandler = @Sendable (HTTPRequest, HTTPResponder) -> Void

    private struct Running: @unchecked Sendable {
        let daemon: OpaquePointer
        let dispatcher: Unmanaged<RequestDispatcher>
        let address: HTTPServerAddress
        let port: Int
    }

    private enum State: Sendable { case idle, running(Running), stopped }

    public let configuration: HTTPServerConfiguration
    private let dispatcher: RequestDispatcher
    private let state = Mutex(State.idle)

    /// A server whose handler answers on a server thread.
    public init(configuration: HTTPServerConfiguration, handler: @escaping Handler) {
        self.configuration = configuration
        dispatcher = RequestDispatcher(handler: .immediate(handler), configuration: configuration)
    }

    /// A server whose handler may await (the connection is suspended meanwhile).
    public init(configuration: HTTPServerConfiguration, asyncHandler: @escaping AsyncHandler) {
        self.configuration = configuration
        dispatcher = RequestDispatcher(handler: .suspending(asyncHandler), configuration: configuration)
    }

    /// A server whose handler answers through a responder, now or later (the connection is suspended meanwhile).
    public init(configuration: HTTPServerConfiguration, deferringHandler: @escaping DeferringHandler) {
        self.configuration = configuration
        dispatcher = RequestDispatcher(handler: .deferring(deferringHandler), configuration: configuration)
    }

    deinit { stop() }

    /// Binds the address and starts serving; throws `HTTPServerError` naming the address on failure.
    public func start() throws {
        try configuration.validate()
        let address = try HTTPServerAddress(parsing: configuration.address)
        try state.withLock { state in
            guard case .idle = state else {
                throw HTTPServerError(.notStartable, what: address.description, reason: "start() may be called once")
            }
            let fd = try configuration.listeningDescriptor.map { try ListeningSocket.adopt($0, as: address) }
                ?? ListeningSocket.open(address, backlog: configuration.listenBacklog)
            let port = ListeningSocket.port(of: fd) ?? Int(address.port)
            let retained = Unmanaged.passRetained(dispatcher)
            guard let daemon = startDaemon(listening: fd, family: address.family, context: retained.toOpaque()) else {
                retained.release()
                close(fd)
                throw HTTPServerError(.startFailed, what: address.description, reason: "MHD_start_daemon failed (threads, limits or memory)")
            }
            state = .running(Running(daemon: daemon, dispatcher: retained, address: address, port: port))
        }
    }

    /// The port the server listens on (the kernel's choice when 0 was asked), or nil when not running.
    public var boundPort: Int? {
        state.withLock { state in
            if case .running(let running) = state { return running.port }
            return nil
        }
    }

    /// The address actually bound, with the real port, or nil when not running.
    public var boundAddress: String? {
        state.withLock { state in
            guard case .running(let running) = state else { return nil }
            return running.address.family == .ipv6 ? "[\(running.address.host)]:\(running.port)" : "\(running.address.host):\(running.port)"
        }
    }

    /// Stops accepting, answers suspended requests `503`, and shuts the threads down. Idempotent.
    public func stop() {
        let running: Running? = state.withLock { state in
            defer { state = .stopped }
            if case .running(let running) = state { return running }
            return nil
        }
        guard let running else { return }
        running.dispatcher.takeUnretainedValue().drain(timeout: .seconds(5))
        MHD_stop_daemon(running.daemon)
        running.dispatcher.release()
    }

    /// `stop()` for async callers: it runs on a thread of its own, since draining waits up to 5 s for requests in
    /// flight and must not hold a thread of the cooperative pool meanwhile.
    public func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                self.stop()
                continuation.resume()
            }
        }
    }

    private func startDaemon(listening fd: Int32, family: HTTPServerAddress.Family, context: UnsafeMutableRawPointer) -> OpaquePointer? {
        var flags = MHD_USE_AUTO_INTERNAL_THREAD.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
        if family == .ipv6 { flags |= MHD_USE_IPv6.rawValue }
        var options: [MHD_OptionItem] = [
            MHD_OptionItem(option: .CONNECTION_TIMEOUT, value: configuration.connectionTimeoutSeconds, ptr_value: nil),
        ]
        if configuration.threads > 1 {
            options.append(MHD_OptionItem(option: .THREAD_POOL_SIZE, value: configuration.threads, ptr_value: nil))
        }
        if let limit = configuration.connectionLimit {
            options.append(MHD_OptionItem(option: .CONNECTION_LIMIT, value: limit, ptr_value: nil))
        }
        if let limit = configuration.perIPConnectionLimit {
            options.append(MHD_OptionItem(option: .PER_IP_CONNECTION_LIMIT, value: limit, ptr_value: nil))
        }
        if configuration.strictFraming {
            options.append(MHD_OptionItem(option: .STRICT_FOR_CLIENT, value: 1, ptr_value: nil))
        }
        if let limit = configuration.connectionMemoryLimit {
            options.append(MHD_OptionItem(option: .CONNECTION_MEMORY_LIMIT, value: limit, ptr_value: nil))
        }
        options.append(MHD_OptionItem(option: .END, value: 0, ptr_value: nil))
        return options.withUnsafeMutableBufferPointer { buffer in
            countdown_mhd_start(flags, fd, accessHandler, context, requestCompleted, context, connectionNotified, context, buffer.baseAddress)
        }
    }
}

/// The daemon's access handler: forwards every call to the dispatcher.
private let accessHandler: MHD_AccessHandlerCallback = { context, connection, url, method, _, uploadData, uploadDataSize, slot in
    guard let context, let connection, let url, let method, let uploadDataSize, let slot else { return .NO }
    let dispatcher = Unmanaged<RequestDispatcher>.fromOpaque(context).takeUnretainedValue()
    return dispatcher.handle(
        connection: connection, url: url, method: method, uploadData: uploadData, uploadDataSize: uploadDataSize, slot: slot)
}

/// The daemon's connection notifications: forwarded to the dispatcher (request deadlines).
private let connectionNotified: MHD_NotifyConnectionCallback = { context, connection, _, code in
    guard let context, let connection else { return }
    Unmanaged<RequestDispatcher>.fromOpaque(context).takeUnretainedValue()
        .connection(connection, started: code == MHD_ConnectionNotificationCode(rawValue: 0))  // MHD_CONNECTION_NOTIFY_STARTED
}

/// The daemon's completion callback: releases the request's context.
private let requestCompleted: MHD_RequestCompletedCallback = { context, _, slot, _ in
    guard let context, let slot, let stored = slot.pointee else { return }
    slot.pointee = nil
    let request = Unmanaged<RequestContext>.fromOpaque(stored)
    Unmanaged<RequestDispatcher>.fromOpaque(context).takeUnretainedValue().completed(request.takeUnretainedValue())
    request.release()
}
