import BlockingIO
import CCurl
import Synchronization

/// Drives one libcurl multi handle on a thread it owns: takes submitted transfers from a locked inbox, runs them
/// all concurrently with `curl_multi_perform`, sleeps in `curl_multi_poll`, and is woken by `curl_multi_wakeup`.
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
    private let thread: SerialThread
    private let inbox = Mutex(Inbox())
    let connectionsOpened = Atomic<Int>(0)
    let inFlight = Atomic<Int>(0)

    // Touched only on `thread`.
    private var active: [UnsafeMutableRawPointer: Transfer] = [:]
    private var idleHandles: [CurlEasy] = []

    init(configuration: HTTPClientConfiguration) throws {
        self.configuration = configuration
        multi = try CurlMulti(configuration: configuration)
        thread = SerialThread(name: configuration.name)
        thread.submit { [self] in run() }
    }

    /// Hands `transfer` to the loop; fails it with `.shutdown` when the engine has stopped.
    func submit(_ transfer: Transfer) {
        inFlight.add(1, ordering: .relaxed)
        let accepted = inbox.withLock { inbox -> Bool in
            if inbox.stopping || inbox.closed { return false }
            inbox.submitted.append(transfer)
            wakeLocked(&inbox)
            return true
        }
        if !accepted {
            inFlight.subtract(1, ordering: .relaxed)
            transfer.finish(.failure(HTTPClientError(.shutdown, "the HTTP client is shut down", url: transfer.request.url)))
        }
    }

    func cancel(_ transfer: Transfer) {
        transfer.cancelRequested.store(true, ordering: .sequentiallyConsistent)
        inbox.withLock { inbox in
            guard !inbox.closed else { return }
            inbox.cancelled.append(transfer)
            wakeLocked(&inbox)
        }
    }

    /// Ends the loop: every unfinished request fails with `.shutdown`.
    func stop() {
        inbox.withLock { inbox in
            guard !inbox.stopping, !inbox.closed else { return }
            inbox.stopping = true
            curl_multi_wakeup(multi.handle)
        }
        thread.stop()
    }

    private func wakeLocked(_ inbox: inout Inbox) {
        if !inbox.wakePending {
            inbox.wakePending = true
            curl_multi_wakeup(multi.handle)
        }
    }

    private func run() {
        while true {
            let (submitted, cancelled, stopping) = inbox.withLock { inbox in
                defer {
                    inbox.submitted.removeAll(keepingCapacity: true)
                    inbox.cancelled.removeAll(keepingCapacity: true)
                    inbox.wakePending = false
                }
                return (inbox.submitted, inbox.cancelled, inbox.stopping)
            }
            if stopping { break }
            for transfer in submitted { start(transfer) }
            for transfer in cancelled { abort(transfer) }
            var running: Int32 = 0
            let performed = curl_multi_perform(multi.handle, &running)
            if performed != CURLM_OK {
                failAll(HTTPClientError(.other, "curl_multi_perform: \(String(cString: curl_multi_strerror(performed)))"))
            }
            collectFinished()
            _ = curl_multi_poll(multi.handle, nil, 0, 1000, nil)
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
    }

    private func start(_ transfer: Transfer) {
        if transfer.cancelRequested.load(ordering: .sequentiallyConsistent) {
            complete(transfer, .failure(HTTPClientError(.cancelled, "the request was cancelled", url: transfer.request.url)))
            return
        }
        do {
            let easy = try idleHandles.popLast() ?? CurlEasy()
            transfer.easy = easy
            do {
                try EasyConfigurator(configuration: configuration).configure(easy, for: transfer)
                try Curl.check(curl_multi_add_handle(multi.handle, easy.handle), "curl_multi_add_handle")
            } catch {
                recycle(transfer)
                throw error
            }
            active[easy.handle] = transfer
        } catch {
            let failure = error as? HTTPClientError ?? HTTPClientError(.other, "\(error)")
            complete(transfer, .failure(HTTPClientError(failure.code, failure.message, url: transfer.request.url, curlCode: failure.curlCode)))
        }
    }

    private func abort(_ transfer: Transfer) {
        guard let easy = transfer.easy, active.removeValue(forKey: easy.handle) != nil else { return }
        curl_multi_remove_handle(multi.handle, easy.handle)
        recycle(transfer)
        complete(transfer, .failure(HTTPClientError(.cancelled, "the request was cancelled", url: transfer.request.url)))
    }

    private func collectFinished() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi.handle, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
                  let transfer = active.removeValue(forKey: handle), let easy = transfer.easy
            else { continue }
            let code = message.pointee.data.result
            curl_multi_remove_handle(multi.handle, handle)
            let result = outcome(of: transfer, easy: easy, code: code)
            recycle(transfer)
            complete(transfer, result)
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
        let message = transfer.curlMessage(fallback: String(cString: curl_easy_strerror(code)))
        return .failure(Curl.error(
            code, message: message, url: url, osErrno: easy.long(CURLINFO_OS_ERRNO),
            connected: easy.long(CURLINFO_REQUEST_SIZE) > 0))
    }

    private func recycle(_ transfer: Transfer) {
        guard let easy = transfer.easy else { return }
        transfer.easy = nil
        easy.reset()
        transfer.headerList = nil
        if idleHandles.count < configuration.maxConnections { idleHandles.append(easy) }
    }

    private func complete(_ transfer: Transfer, _ result: Result<HTTPResponse, HTTPClientError>) {
        inFlight.subtract(1, ordering: .relaxed)
        transfer.finish(result)
    }

    private func failAll(_ error: HTTPClientError) {
        for (handle, transfer) in active {
            curl_multi_remove_handle(multi.handle, handle)
            recycle(transfer)
            complete(transfer, .failure(HTTPClientError(error.code, error.message, url: transfer.request.url)))
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
