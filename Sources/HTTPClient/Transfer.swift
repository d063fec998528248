import CCurl
import HTTPTypes
import Synchronization

/// One request in flight: its easy handle, response buffers and the batch waiting for it.
///
/// Everything but `cancelRequested` is touched only on the client's transfer thread.
final class Transfer: @unchecked Sendable {
    let request: HTTPRequest
    let maxResponseBytes: Int
    let cancelRequested = Atomic<Bool>(false)

    /// The batch waiting for this transfer's outcome (as its `index`th), until the transfer finishes.
    private var batch: TransferBatch?
    private let index: Int
    var easy: CurlEasy?
    var responseBody: [UInt8] = []
    var responseHeaders = HTTPHeaders()
    var exceededLimit = false
    /// When the engine's watchdog ends the transfer if libcurl has not: its timeout plus a grace period.
    var watchdogDeadline: ContinuousClock.Instant?

    private let onAnswer: AnswerHook?

    init(request: HTTPRequest, maxResponseBytes: Int, batch: TransferBatch, index: Int, onAnswer: AnswerHook? = nil) {
        self.request = request
        self.maxResponseBytes = maxResponseBytes
        self.batch = batch
        self.index = index
        self.onAnswer = onAnswer
    }

    /// Tells the answer hook and hands the result to its batch, once; later calls do nothing.
    func finish(_ result: Result<HTTPResponse, HTTPClientError>) {
        guard let batch else { return }
        self.batch = nil
        onAnswer?(index, result)
        batch.finish(index, result)
    }

    func appendBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if responseBody.count + bytes.count > maxResponseBytes {
            exceededLimit = true
            return false
        }
        responseBody.append(contentsOf: bytes)
        return true
    }

    /// Takes one header line as libcurl delivers it (status lines start a new header block). Works on the bytes,
    /// so a header costs two strings (its name and value), not five.
    func appendHeaderLine(_ bytes: UnsafeRawBufferPointer) {
        var end = bytes.count
        while end > 0, bytes[end - 1] == UInt8(ascii: "\r") || bytes[end - 1] == UInt8(ascii: "\n") { end -= 1 }
        if end >= 5, bytes[0] == UInt8(ascii: "H"), bytes[1] == UInt8(ascii: "T"), bytes[2] == UInt8(ascii: "T"),
           bytes[3] == UInt8(ascii: "P"), bytes[4] == UInt8(ascii: "/") {
            responseHeaders = HTTPHeaders()
            return
        }
        guard let colon = bytes[0..<end].firstIndex(of: UInt8(ascii: ":")) else { return }
        let name = Self.trimmed(bytes, from: 0, to: colon)
        let value = Self.trimmed(bytes, from: colon + 1, to: end)
        responseHeaders.add(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[name]), as: UTF8.self),
                            String(decoding: UnsafeRawBufferPointer(rebasing: bytes[value]), as: UTF8.self))
    }

    private static func trimmed(_ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Range<Int> {
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var lower = start
        var upper = end
        while lower < upper, isBlank(bytes[lower]) { lower += 1 }
        while upper > lower, isBlank(bytes[upper - 1]) { upper -= 1 }
        return lower..<upper
    }
}
