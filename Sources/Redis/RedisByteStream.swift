/// Bytes to and from one Redis endpoint: a plain socket, or TLS carried over one. The connection speaks RESP over
/// either the same way.
protocol RedisByteStream: AnyObject {
    /// Writes all of `bytes` before `deadline`.
    func write(_ bytes: UnsafeRawBufferPointer, deadline: ContinuousClock.Instant) throws
    /// Reads some bytes into `buffer`, waiting until `deadline` or `interrupt` when none are available.
    func read(into buffer: UnsafeMutableRawBufferPointer, deadline: ContinuousClock.Instant, interrupt: WakePipe?) throws -> RedisSocket.Received
}
