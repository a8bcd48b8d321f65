/**
 * The local side of pub/sub: which handlers listen on which channel, and delivery that isolates them, so one
 * handler's error (thrown or a rejected promise) neither reaches the publisher nor stops the other handlers.
 */
export type MessageHandler = (message: string) => void;

/** Where a coordinator reports errors it cannot return to a caller (a subscriber's handler, a lost connection). */
export type ReportError = (error: unknown, context: string) => void;

export const warnOnError: ReportError = (error, context) => {
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.emitWarning(`coordinator: ${context}: ${detail}`, { type: 'CoordinatorWarning' });
};

/** One call of `subscribe`; the same function subscribed twice is two subscriptions. */
interface Subscription {
  readonly handler: MessageHandler;
}

export class ChannelHandlers {
  private readonly channels = new Map<string, Set<Subscription>>();

  constructor(private readonly reportError: ReportError) {}

  /** Adds a subscription; `first` is true when the channel had none, so the caller subscribes upstream. */
  add(channel: string, handler: MessageHandler): { subscription: Subscription; first: boolean } {
    let subscriptions = this.channels.get(channel);
    const first = subscriptions === undefined;
    if (!subscriptions) {
      subscriptions = new Set();
      this.channels.set(channel, subscriptions);
    }
    const subscription: Subscription = { handler };
    subscriptions.add(subscription);
    return { subscription, first };
  }

  /** Removes a subscription; true when that left the channel with none, so the caller unsubscribes upstream. */
  remove(channel: string, subscription: Subscription): boolean {
    const subscriptions = this.channels.get(channel);
    if (!subscriptions?.delete(subscription)) return false;
    if (subscriptions.size > 0) return false;
    this.channels.delete(channel);
    return true;
  }

  /** Calls every handler of `channel` that is still subscribed when its turn comes. */
  deliver(channel: string, message: string): void {
    const subscriptions = this.channels.get(channel);
    if (!subscriptions) return;
    for (const subscription of [...subscriptions]) {
      if (!subscriptions.has(subscription)) continue;
      try {
        const returned: unknown = subscription.handler(message);
        if (returned instanceof Promise) {
          returned.catch((error: unknown) => this.reportError(error, `handler of channel ${channel}`));
        }
      } catch (error) {
        this.reportError(error, `handler of channel ${channel}`);
      }
    }
  }

  clear(): void {
    this.channels.clear();
  }
}
