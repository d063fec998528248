import CCurl
import HTTPTypes
import Synchronization

/// One request in flight: its easy handle, header list, response buffers and the task waiting for it.
///
/// Everything but `cancelRequested` is touched only on the client's transfer thread.
final class Transfer: @unchecked Sendable {
    let request: HTTPRequest
    let maxResponseBytes: Int
    let cancelRequested = Atomic<Bool>(false)

    var continuation: CheckedContinuation<HTTPResponse, any Error>?
    var easy: CurlEasy?
    var headerList: CurlHeaderList?
    var responseBody: [UInt8] = []
    var responseHeaders = HTTPHeaders()
    var exceededLimit = false
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))

    init(request: HTTPRequest, maxResponseBytes: Int) {
        self.request = request
        self.maxResponseBytes = maxResponseBytes
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit { errorBuffer.deallocate() }

    /// Resumes the waiting task once; later calls do nothing.
    func finish(_ result: Result<HTTPResponse, HTTPClientError>) {
        guard let continuation else { return }
        self.continuation = nil
        continuation.resume(with: result.mapError { $0 as any Error })
    }

    /// libcurl's own words about the last failure, or `fallback`.
    func curlMessage(fallback: String) -> String {
        let text = String(cString: errorBuffer)
        return text.isEmpty ? fallback : text
    }

    func appendBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if responseBody.count + bytes.count > maxResponseBytes {
            exceededLimit = true
            return false
        }
        responseBody.append(contentsOf: bytes)
        return true
    }

    /// Takes one header line as libcurl delivers it (status lines start a new header block).
    func appendHeaderLine(_ bytes: UnsafeRawBufferPointer) {
        var end = bytes.count
        while end > 0, bytes[end - 1] == UInt8(ascii: "\r") || bytes[end - 1] == UInt8(ascii: "\n") { end -= 1 }
        let line = Substring(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<end]), as: UTF8.self))
        if line.hasPrefix("HTTP/") {
            responseHeaders = HTTPHeaders()
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].trimmingSpaces()
        let value = line[line.index(after: colon)...].trimmingSpaces()
        responseHeaders.add(String(name), String(value))
    }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
