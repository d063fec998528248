import CountdownStore

extension ConsoleRender {
    /// The stream page's broadcast channels (`APNS_BROADCAST=on`, SPEC 12.5); nothing when the stream has none.
    func channels(_ channels: [BroadcastChannel]) -> HTML {
        guard !channels.isEmpty else { return "" }
        return table("Broadcast channel", ["channel", "state", "shows", "first used", "ended", "deleted after", "failed attempts"], channels.map {
            [text($0.channelID ?? "—"), text($0.state.rawValue), time($0.shownStartAt), time($0.usedAt), time($0.endedAt), time($0.deleteAfter),
             "\(number($0.attempts))\(text($0.lastError.map { ": " + $0 } ?? ""))"]
        })
    }
}
