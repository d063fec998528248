extension RedisConnection {
    /// Waits up to `timeout` for a reply the server sends on its own (pub/sub messages), returning early when
    /// `interrupt` is signalled. A timeout leaves the connection usable; a broken socket throws and drops it.
    func awaitPushedReply(timeout: Duration, interrupt: WakePipe) throws -> RedisTransport.Awaited {
        guard !isClosed, let transport = currentTransport else {
            throw RedisError(.io, "connection is broken", context: "await message")
        }
        do {
            return try transport.nextReply(deadline: ContinuousClock.now.advanced(by: timeout), interrupt: interrupt)
        } catch {
            dropTransport()
            throw error
        }
    }
}
