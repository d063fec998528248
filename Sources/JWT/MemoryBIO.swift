import COpenSSL

/// Owner of an OpenSSL memory `BIO`, used to read and write PEM text.
final class MemoryBIO {
    let handle: OpaquePointer

    /// A read-only BIO over a copy of `bytes` (the copy lives as long as the BIO).
    init(reading bytes: [UInt8], source: String?) throws {
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        storage.copyBytes(from: bytes)
        guard let bio = BIO_new_mem_buf(storage.baseAddress, Int32(bytes.count)) else {
            storage.deallocate()
            throw OpenSSL.failure(.cryptoFailure, "BIO_new_mem_buf failed", source: source)
        }
        handle = bio
    }

    /// An empty, growable BIO to write into.
    init() throws {
        storage = UnsafeMutableRawBufferPointer(start: nil, count: 0)
        handle = try OpenSSL.check(BIO_new(BIO_s_mem()), .cryptoFailure, "BIO_new failed")
    }

    private let storage: UnsafeMutableRawBufferPointer

    /// Everything written so far.
    func contents() -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let read = BIO_read(handle, &chunk, Int32(chunk.count))
            if read <= 0 { break }
            result.append(contentsOf: chunk[0..<Int(read)])
        }
        return result
    }

    deinit {
        BIO_free(handle)
        storage.deallocate()
    }
}
