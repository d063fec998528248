extension CollapseID {
    /// `countdown-` and the stream id's short hash (26 bytes): `android.collapse_key` of a stream's Android
    /// countdown starts and updates (never of its end, which must not be collapsed away).
    public static func countdown(stream streamId: String) -> String { "countdown-" + shortHash(streamId) }
}
