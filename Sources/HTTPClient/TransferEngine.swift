import BlockingIO
import CCurl
import HTTPTypes
import Synchronization

/// Drives one libcurl multi handle on a thread it owns, through libcurl's socket interface: libcurl names the
/// sockets to watch and its next timeout, an `EventPoller` (epoll) waits for them, and
/// `curl_multi_socket_action` runs only the transfers whose sockets are ready. Submitted transfers arrive through
/// a locked inbox and the poller's wake-up descriptor.
final class TransferEngine: @unchecked Sendable {
    private struct Inbox {
        var submitted: [Transfer] = []
        var cancelled: [Transfer] = []
        var wakePending = false
        var stopping = false
        var closed = false
    }

    private let configuration: HTTPClientConfiguration
    private let multi: CurlMulti
    private let poller: EventPoller
    private let thread: SerialThread
    private let inbox = Mutex(Inbox())
    let connectionsOpened = Atomic<Int>(0)
    let inFlight = Atomic<Int>(0)
    let polls = Atomic<Int>(0)

    // Touched only on `thread` (libcurl calls the socket and timer callbacks from within its calls there).
    private var active: [UnsafeMutableRawPointer: Transfer] = [:]
    private var idleHandles: [CurlEasy] = []
    private var headerLists = HeaderListCache()
    /// When libcurl wants `curl_multi_socket_action(CURL_SOCKET_TIMEOUT)`; nil when it has no timeout.
    private var timerDeadline: ContinuousClock.Instant?
    /// When the watchdog next looks for overdue transfers.
    private var nextWatchdogCheck = ContinuousClock.now
    /// Transfers whose socket could not be watched (epoll_ctl failed): failed after the current action.
    private var unwatchable: [(easy: UnsafeMutableRawPointer, error: HTTPClientError)] = []

    init(configuration: HTTPClientConfiguration) throws {
        self.configuration = configuration
        poller = try EventPoller()
        multi = try CurlMulti(configuration: configuration, sockets: SocketRegistry(poller: poller))
        thread = SerialThread(name: configuration.name)
        do {
            try installCallbacks()
        } catch {
            thread.stop()
            throw error
        }
        thread.submit { [self] in run() }
    }

    /// Hands `transfers` to the loop (one lock, one wake-up); fails them with `.shutdown` when the engine has stopped.
    func submit(_ transfers: [Transfer]) {
        inFlight.add(transfers.count, ordering: .relaxed)
        let accepted = inbox.withLock { inbox -> Bool in
            if inbox.stopping || inbox.closed { return false }
            inbox.submitted.append(contentsOf: transfers)
            wakeLocked(&inbox)
            return true
        }
        if !accepted {
            inFlight.subtract(transfers.count, ordering: .relaxed)
            for transfer in transfers {
                transfer.finish(.failure(HTTPClientError(.shutdown, "the HTTP client is shut down", url: transfer.request.url)))
            }
        }
    }

    func cancel(_ transfers: [Transfer]) {
        for transfer in transfers { transfer.cancelRequested.store(true, ordering: .sequentiallyConsistent) }
        inbox.withLock { inbox in
            guard !inbox.closed else { return }
            inbox.cancelled.append(contentsOf: transfers)
            wakeLocked(&inbox)
        }
    }

    /// Ends the loop: every unfinished request fails with `.shutdown`.
    func stop() {
        inbox.withLock { inbox in
            guard !inbox.stopping, !inbox.closed else { return }
            inbox.stopping = true
            poller.wake()
        }
        thread.stop()
    }

    private func wakeLocked(_ inbox: inout Inbox) {
        if !inbox.wakePending {
            inbox.wakePending = true
            poller.wake()
        }
    }

    private func run() {
        var lastPoll = ContinuousClock.now
        var lastPollFilled = false
        while true {
            let (submitted, cancelled, stopping) = inbox.withLock { inbox in
                defer {
                    inbox.submitted.removeAll(keepingCapacity: true)
                    inbox.cancelled.removeAll(keepingCapacity: true)
                    inbox.wakePending = false
                }
                return (inbox.submitted, inbox.cancelled, inbox.stopping)
            }
            if stopping {
                // Taken from the inbox in the same turn as the stop: failed here, or nobody would answer them.
                for transfer in submitted {
                    complete(transfer, .failure(HTTPClientError(.shutdown, "the HTTP client is shut down", url: transfer.request.url)))
                }
                break
            }
            for transfer in submitted { start(transfer) }
            for transfer in cancelled { abort(transfer) }
            actOnTimerIfDue()
            collectFinished()
            failOverdue()
            // More sockets were ready than one poll takes: the rest are taken at once.
            if !lastPollFilled { lingerBeforePolling(since: lastPoll) }
            lastPoll = .now
            polls.add(1, ordering: .relaxed)
            let ready = poller.wait(timeoutMilliseconds: waitMilliseconds()) { ready in
                var mask: Int32 = 0
                if ready.readable { mask |= CURL_CSELECT_IN }
                if ready.writable { mask |= CURL_CSELECT_OUT }
                if ready.failed { mask |= CURL_CSELECT_ERR }
                act(on: ready.fd, mask)
            }
            lastPollFilled = ready >= poller.capacity
            actOnTimerIfDue()
            collectFinished()
        }
        let leftovers = inbox.withLock { inbox in
            inbox.closed = true
            defer { inbox.submitted.removeAll() }
            return inbox.submitted
        }
        let shutdown = HTTPClientError(.shutdown, "the HTTP client is shut down")
        for transfer in leftovers { complete(transfer, .failure(shutdown)) }
        failAll(shutdown)
        idleHandles.removeAll()
        // curl_multi_cleanup (when the engine is freed) closes the cached connections: no callback may reach it then.
        _ = countdown_curl_multi_setopt_socket(multi.handle, nil, nil)
        _ = countdown_curl_multi_setopt_timer(multi.handle, nil, nil)
    }

    /// With transfers in flight, waits out the rest of the coalescing window since the last poll, so the next poll
    /// collects every answer that arrived meanwhile in one wake-up. Never past libcurl's next timeout, and a new
    /// request, a cancellation or `stop()` ends the pause at once (they wake the poller).
    private func lingerBeforePolling(since lastPoll: ContinuousClock.Instant) {
        let window = min(configuration.coalescingWindow, HTTPClientConfiguration.maxCoalescingWindow)
        guard window > .zero, !active.isEmpty else { return }
        var until = lastPoll + window
        if let deadline = timerDeadline { until = min(until, deadline) }
        let now = ContinuousClock.now
        guard until > now else { return }
        poller.pause(upTo: now.duration(to: until))
    }

    // MARK: libcurl's socket interface

    private func installCallbacks() throws {
        // Unretained: the loop's closure keeps the engine alive, and the loop removes both callbacks as it ends.
        let context = Unmanaged.passUnretained(self).toOpaque()
        try Curl.check(countdown_curl_multi_setopt_socket(multi.handle, { easy, socket, what, context, _ in
            Unmanaged<TransferEngine>.fromOpaque(context!).takeUnretainedValue().watch(socket, what, easy: easy)
            return 0
        }, context), "setting the socket callback")
        try Curl.check(countdown_curl_multi_setopt_timer(multi.handle, { _, milliseconds, context in
            Unmanaged<TransferEngine>.fromOpaque(context!).takeUnretainedValue().setTimer(milliseconds: milliseconds)
            return 0
        }, context), "setting the timer callback")
    }

    private func watch(_ socket: curl_socket_t, _ what: Int32, easy: UnsafeMutableRawPointer?) {
        let owned = multi.sockets.owns(socket)
        if what == CURL_POLL_REMOVE {
            // A connection's socket stays in the set while idle, ready for its next transfer without a system call.
            if owned { poller.park(socket) } else { poller.forget(socket) }
            return
        }
        do {
            try poller.watch(socket, read: what & CURL_POLL_IN != 0, write: what & CURL_POLL_OUT != 0, sameSocket: owned)
        } catch {
            if let easy { unwatchable.append((easy, error as? HTTPClientError ?? HTTPClientError(.io, "\(error)"))) }
        }
    }

    private func setTimer(milliseconds: Int) {
        timerDeadline = milliseconds < 0 ? nil : .now + .milliseconds(milliseconds)
    }

    /// Until libcurl's next timeout, at most a second (rounded up: a wake-up before it would find nothing to do).
    private func waitMilliseconds() -> Int32 {
        guard let deadline = timerDeadline else { return 1000 }
        let remaining = ContinuousClock.now.duration(to: deadline)
        return remaining <= .zero ? 0 : Int32(min(1000, remaining.millisecondsRoundedUp))
    }

    /// The deadline stays until libcurl moves it: it calls the timer callback whenever its earliest timeout
    /// changes, and a timeout it has not yet reached is simply tried again.
    private func actOnTimerIfDue() {
        guard let deadline = timerDeadline, deadline <= .now else { return }
        act(on: CURL_SOCKET_TIMEOUT, 0)
    }

    private func act(on socket: curl_socket_t, _ mask: Int32) {
        var running: Int32 = 0
        let code = curl_multi_socket_action(multi.handle, socket, mask, &running)
        if code != CURLM_OK {
            failAll(HTTPClientError(.other, "curl_multi_socket_action: \(String(cString: curl_multi_strerror(code)))"))
        }
        failUnwatchable()
    }

    private func failUnwatchable() {
        guard !unwatchable.isEmpty else { return }
        let failed = unwatchable
        unwatchable.removeAll()
        for (handle, error) in failed {
            guard let transfer = active.removeValue(forKey: handle) else { continue }
            retire(handle, transfer, .failure(HTTPClientError(.io, "cannot watch the connection's socket: \(error.message)", url: transfer.request.url)))
        }
    }

    // MARK: Transfers

    private func start(_ transfer: Transfer) {
        if transfer.cancelRequested.load(ordering: .sequentiallyConsistent) {
            complete(transfer, .failure(HTTPClientError(.cancelled, "the request was cancelled", url: transfer.request.url)))
            return
        }
        do {
            let easy = try idleHandles.popLast() ?? CurlEasy()
            transfer.easy = easy
            do {
                let headers = try headerLists.list(for: transfer.request)
                try EasyConfigurator(configuration: configuration, sockets: multi.sockets).configure(easy, for: transfer, headers: headers)
                try Curl.check(curl_multi_add_handle(multi.handle, easy.handle), "curl_multi_add_handle")
            } catch {
                recycle(transfer)
                throw error
            }
            transfer.watchdogDeadline = .now + (transfer.request.timeout ?? configuration.requestTimeout) + Self.watchdogGrace
            active[easy.handle] = transfer
        } catch {
            let failure = error as? HTTPClientError ?? HTTPClientError(.other, "\(error)")
            complete(transfer, .failure(HTTPClientError(failure.code, failure.message, url: transfer.request.url, curlCode: failure.curlCode)))
        }
    }

    private func abort(_ transfer: Transfer) {
        guard let easy = transfer.easy, active.removeValue(forKey: easy.handle) != nil else { return }
        retire(easy.handle, transfer, .failure(HTTPClientError(.cancelled, "the request was cancelled", url: transfer.request.url)))
    }

    /// How long past its timeout a transfer may stay before the watchdog ends it (libcurl's own timeout, with its
    /// exact error, normally comes first).
    static let watchdogGrace: Duration = .seconds(1)

    /// Ends transfers libcurl has let run past their timeout. libcurl before 8.8 times out only transfers that have
    /// a connection: one queued for a free connection (all `maxConnections` busy) waited for as long as the
    /// connection it waits for stayed busy. Looked at a few times a second (the loop wakes at least once a second).
    private func failOverdue() {
        let now = ContinuousClock.now
        guard now >= nextWatchdogCheck else { return }
        nextWatchdogCheck = now + .milliseconds(250)
        let overdue = active.filter { _, transfer in transfer.watchdogDeadline.map { $0 <= now } ?? false }
        for (handle, transfer) in overdue {
            guard let easy = transfer.easy else { continue }
            active.removeValue(forKey: handle)
            // No request bytes out means it never left the queue: safe to send again, like a connect timeout.
            retire(handle, transfer, .failure(Curl.error(
                CURLE_OPERATION_TIMEDOUT, message: "no answer within the request's timeout (still waiting for a connection or an answer)",
                url: transfer.request.url, connected: easy.long(CURLINFO_REQUEST_SIZE) > 0)))
        }
    }

    private func collectFinished() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi.handle, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
                  let transfer = active.removeValue(forKey: handle), let easy = transfer.easy
            else { continue }
            retire(handle, transfer, outcome(of: transfer, easy: easy, code: message.pointee.data.result))
        }
    }

    private func outcome(of transfer: Transfer, easy: CurlEasy, code: CURLcode) -> Result<HTTPResponse, HTTPClientError> {
        connectionsOpened.add(easy.long(CURLINFO_NUM_CONNECTS), ordering: .relaxed)
        let url = transfer.request.url
        if code == CURLE_OK {
            return .success(HTTPResponse(
                status: easy.long(CURLINFO_RESPONSE_CODE), headers: transfer.responseHeaders, body: transfer.responseBody,
                httpVersion: Self.versionName(easy.long(CURLINFO_HTTP_VERSION))))
        }
        if code == CURLE_WRITE_ERROR && transfer.exceededLimit {
            return .failure(HTTPClientError(
                .responseTooLarge, "response body exceeds \(transfer.maxResponseBytes) bytes", url: url,
                curlCode: Int32(bitPattern: code.rawValue)))
        }
        let message = configuration.proxy.redacting(easy.errorMessage(fallback: String(cString: curl_easy_strerror(code))))
        return .failure(Curl.error(
            code, message: message, url: url, osErrno: easy.long(CURLINFO_OS_ERRNO),
            connected: easy.long(CURLINFO_REQUEST_SIZE) > 0))
    }

    /// Takes a transfer already out of `active` off libcurl, puts its handle back for reuse and ends it with `result`.
    private func retire(_ handle: UnsafeMutableRawPointer, _ transfer: Transfer, _ result: Result<HTTPResponse, HTTPClientError>) {
        curl_multi_remove_handle(multi.handle, handle)
        recycle(transfer, keepingOptions: (try? result.get()) != nil)
        complete(transfer, result)
    }

    /// Puts the transfer's handle back for reuse: with its options for the next request of the same shape after
    /// a transfer that ended well, cleared after any other.
    private func recycle(_ transfer: Transfer, keepingOptions: Bool = false) {
        guard let easy = transfer.easy else { return }
        transfer.easy = nil
        if !keepingOptions { easy.reset() }
        if idleHandles.count < configuration.maxConnections { idleHandles.append(easy) }
    }

    private func complete(_ transfer: Transfer, _ result: Result<HTTPResponse, HTTPClientError>) {
        inFlight.subtract(1, ordering: .relaxed)
        transfer.finish(result)
    }

    private func failAll(_ error: HTTPClientError) {
        for (handle, transfer) in active {
            retire(handle, transfer, .failure(HTTPClientError(error.code, error.message, url: transfer.request.url)))
        }
        active.removeAll()
    }

    private static func versionName(_ version: Int) -> String {
        switch version {
        case Int(CURL_HTTP_VERSION_1_0): "1.0"
        case Int(CURL_HTTP_VERSION_1_1): "1.1"
        case Int(CURL_HTTP_VERSION_2_0): "2"
        case Int(CURL_HTTP_VERSION_3): "3"
        default: "unknown"
        }
    }
}
