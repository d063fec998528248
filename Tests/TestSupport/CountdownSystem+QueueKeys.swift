import Redis

extension CountdownSystem {
    /// A key of this system's queue, `{namespace}:q1:<name>` (`due`, `data`, `leased`, ...: the layout of
    /// DelayQueue's QueueKeys), for scenarios that write into the queue directly.
    public func queueKey(_ name: String) -> RedisArgument { RedisArgument("{\(namespace)}:q1:\(name)") }
}
