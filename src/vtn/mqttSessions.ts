// Persistent MQTT sessions (clean session off) of the embedded broker, bounded: aedes' session
// store with its subscriptions, plus the queues of messages waiting for a session and a register
// of which credential each persistent session belongs to. aedes calls it as its persistence
// (the in-memory one underneath keeps subscriptions, wills and inbound QoS 2 state). What it
// adds:
// - only filters the broker granted are stored (aedes stores every filter of a SUBSCRIBE that
//   had one granted);
// - a message is queued for a session only when its rights let it read the message now
//   (mqttAccess.ts), and at most MQTT_MAX_QUEUED_PER_SESSION of them: a session whose queue is
//   full is dropped, so that its client learns it (sessionPresent false) and reads what it
//   missed over REST, rather than losing messages silently;
// - at most MQTT_MAX_SESSIONS_PER_CREDENTIAL persistent sessions per credential (the least
//   recently seen one that is not connected makes room);
// - sessions are dropped with their credential (see mqttBroker.ts) and after
//   MQTT_SESSION_EXPIRY_SECONDS without a connection.
import { Readable } from 'node:stream';
import type { Principal } from '../http/types.ts';
import { mayDeliver, type Message, type Rights } from './mqttAccess.ts';

/** The fields of a queued packet aedes reads back (aedes-packet's, without the broker). */
interface Queued {
  cmd: string;
  brokerId: string;
  brokerCounter: number;
  topic: string;
  payload: Buffer;
  qos: number;
  retain: boolean;
  dup: boolean;
  messageId: number | undefined;
}

type Packet = Queued & Record<string, unknown>;
interface ClientRef {
  id: string;
}
interface Subscription {
  topic: string;
  qos: number;
  clientId?: string;
}

/** The part of aedes' persistence interface that is passed through (aedes-persistence). */
export interface InnerPersistence {
  readonly broker: unknown;
  subscriptionsByTopic(topic: string): Promise<Subscription[]>;
  cleanSubscriptions(client: ClientRef): Promise<unknown>;
  storeRetained(packet: Packet): Promise<void>;
  createRetainedStreamCombi(patterns: string[]): Readable;
  addSubscriptions(client: ClientRef, subs: Subscription[]): Promise<unknown>;
  removeSubscriptions(client: ClientRef, topics: string[]): Promise<unknown>;
  subscriptionsByClient(client: ClientRef): Promise<Subscription[]>;
  incomingStorePacket(client: ClientRef, packet: Packet): Promise<void>;
  incomingGetPacket(client: ClientRef, packet: Packet): Promise<Packet>;
  incomingDelPacket(client: ClientRef, packet: Packet): Promise<void>;
  cleanIncoming(client: ClientRef): Promise<void>;
  putWill(client: ClientRef, packet: Packet): Promise<void>;
  getWill(client: ClientRef): Promise<Packet | undefined>;
  delWill(client: ClientRef): Promise<Packet | undefined>;
  streamWill(brokers?: Record<string, number>): Readable;
  getClientList(topic: string): Readable;
  destroy(): Promise<void>;
}

/** A connected session (clean or persistent). */
export interface Live {
  id: string;
  token: string;
  principal: Principal;
  rights: Rights;
  /** api_clients token_version of the token (null: a personal access token). */
  tokenVersion: number | null;
  persistent: boolean;
}

/** A persistent session: whose it is and when it was last connected. */
export interface PersistentSession {
  readonly id: string;
  /** The credential's public client id (or `user:<id>`). */
  readonly credential: string;
  rights: Rights;
  /** api_clients.id and token_version of the credential when the session was made (null for a
   * user's personal access token). */
  clientRowId: number | null;
  tokenVersion: number | null;
  /** The token it last connected with (a personal access token is checked again with it). */
  token: string;
  connected: boolean;
  lastSeen: number;
}

export interface SessionLimits {
  maxQueued: number;
  maxPerCredential: number;
}

export class SessionStore {
  /** Subscriptions the broker granted (the objects aedes passes to `addSubscriptions`). */
  readonly granted = new WeakSet<object>();
  /** The notification in each published payload, parsed once (set by the broker as it publishes). */
  readonly messages = new WeakMap<Buffer, Message>();
  private readonly queues = new Map<string, Queued[]>();
  private readonly sessions = new Map<string, PersistentSession>();
  private readonly byCredential = new Map<string, Set<string>>();

  constructor(
    private readonly inner: InnerPersistence,
    private readonly limits: SessionLimits,
    /** A session to drop (its queue is full); called outside the store's own calls. */
    private readonly overflow: (id: string) => void,
  ) {}

  get broker(): unknown {
    return this.inner.broker;
  }

  async setup(): Promise<void> {
    // The inner store was set up by aedes before it was wrapped.
  }

  // --- the register of persistent sessions

  get(id: string): PersistentSession | undefined {
    return this.sessions.get(id);
  }

  all(): IterableIterator<PersistentSession> {
    return this.sessions.values();
  }

  /** Records a persistent session connecting (new, or resumed). Returns the sessions dropped to
   * make room, or undefined when none can be: every one of the credential's is connected. */
  connect(session: Omit<PersistentSession, 'connected' | 'lastSeen'>, now: number): PersistentSession[] | undefined {
    const existing = this.sessions.get(session.id);
    if (existing) {
      Object.assign(existing, session, { connected: true, lastSeen: now });
      return [];
    }
    const ids = this.byCredential.get(session.credential) ?? new Set<string>();
    const evicted: PersistentSession[] = [];
    if (ids.size >= this.limits.maxPerCredential) {
      let oldest: PersistentSession | undefined;
      for (const id of ids) {
        const s = this.sessions.get(id)!;
        if (!s.connected && (!oldest || s.lastSeen < oldest.lastSeen)) oldest = s;
      }
      if (!oldest) return undefined;
      evicted.push(oldest);
    }
    this.sessions.set(session.id, { ...session, connected: true, lastSeen: now });
    ids.add(session.id);
    this.byCredential.set(session.credential, ids);
    return evicted;
  }

  /** Records the end of a persistent session's connection. */
  disconnected(id: string, now: number): void {
    const s = this.sessions.get(id);
    if (s) {
      s.connected = false;
      s.lastSeen = now;
    }
  }

  /** Forgets a session: its subscriptions, queue, inbound state and register entry. Returns its
   * register entry when it was persistent. */
  async drop(id: string): Promise<PersistentSession | undefined> {
    const session = this.sessions.get(id);
    this.queues.delete(id);
    if (session) {
      this.sessions.delete(id);
      const ids = this.byCredential.get(session.credential);
      ids?.delete(id);
      if (ids?.size === 0) this.byCredential.delete(session.credential);
    }
    await this.inner.cleanSubscriptions({ id });
    await this.inner.cleanIncoming({ id });
    await this.inner.delWill({ id });
    return session;
  }

  queued(id: string): number {
    return this.queues.get(id)?.length ?? 0;
  }

  // --- aedes' persistence: subscriptions (only granted ones are stored)

  addSubscriptions(client: ClientRef, subs: Subscription[]): Promise<unknown> {
    const kept = subs.filter((s) => this.granted.has(s));
    return kept.length === 0 ? Promise.resolve() : this.inner.addSubscriptions(client, kept);
  }

  removeSubscriptions(client: ClientRef, topics: string[]): Promise<unknown> {
    return this.inner.removeSubscriptions(client, topics);
  }

  subscriptionsByClient(client: ClientRef): Promise<Subscription[]> {
    return this.inner.subscriptionsByClient(client);
  }

  subscriptionsByTopic(topic: string): Promise<Subscription[]> {
    return this.inner.subscriptionsByTopic(topic);
  }

  cleanSubscriptions(client: ClientRef): Promise<unknown> {
    return this.inner.cleanSubscriptions(client);
  }

  // --- the queues of persistent sessions (bounded; checked against the session's rights)

  async outgoingEnqueue(sub: { clientId: string }, packet: Packet): Promise<void> {
    this.enqueue(sub.clientId, packet);
  }

  async outgoingEnqueueCombi(subs: { clientId: string }[], packet: Packet): Promise<void> {
    for (const sub of subs) this.enqueue(sub.clientId, packet);
  }

  private enqueue(id: string, packet: Packet): void {
    const session = this.sessions.get(id);
    if (!session || !mayDeliver(session.rights, packet.topic, this.messages.get(packet.payload))) return;
    let queue = this.queues.get(id);
    if (!queue) this.queues.set(id, (queue = []));
    if (queue.length >= this.limits.maxQueued) {
      setImmediate(this.overflow, id);
      return;
    }
    const { cmd, brokerId, brokerCounter, topic, payload, qos, retain, dup } = packet;
    queue.push({ cmd: cmd ?? 'publish', brokerId, brokerCounter, topic, payload, qos, retain: retain ?? false, dup: dup ?? false, messageId: undefined });
  }

  outgoingStream(client: ClientRef): Readable {
    return Readable.from([...(this.queues.get(client.id) ?? [])]);
  }

  /** Records the packet id a queued message was sent with (as aedes-persistence does). */
  async outgoingUpdate(client: ClientRef, packet: Packet): Promise<void> {
    const queue = this.queues.get(client.id) ?? [];
    for (let i = 0; i < queue.length; i++) {
      const q = queue[i]!;
      if (q.brokerId === packet.brokerId) {
        if (q.brokerCounter === packet.brokerCounter) {
          q.messageId = packet.messageId;
          return;
        }
      } else if (q.messageId === packet.messageId) {
        queue[i] = packet;
        return;
      }
    }
    // Not queued (refused or dropped when it was published): sent untracked.
  }

  /** Removes an acknowledged (or refused) message; one not yet sent has no packet id, and is
   * found by its broker counter instead of the first id-less entry. */
  async outgoingClearMessageId(client: ClientRef, packet: Packet): Promise<Queued | undefined> {
    const queue = this.queues.get(client.id);
    if (!queue) return undefined;
    const i =
      packet.messageId === undefined
        ? queue.findIndex((q) => q.brokerId === packet.brokerId && q.brokerCounter === packet.brokerCounter)
        : queue.findIndex((q) => q.messageId === packet.messageId);
    if (i === -1) return undefined;
    const [removed] = queue.splice(i, 1);
    if (queue.length === 0) this.queues.delete(client.id);
    return removed;
  }

  // --- passed through: retained messages (never stored: the broker publishes none), wills
  // (refused at CONNECT), inbound QoS 2 (clients may not publish)

  storeRetained(packet: Packet): Promise<void> {
    return this.inner.storeRetained(packet);
  }

  createRetainedStreamCombi(patterns: string[]): Readable {
    return this.inner.createRetainedStreamCombi(patterns);
  }

  incomingStorePacket(client: ClientRef, packet: Packet): Promise<void> {
    return this.inner.incomingStorePacket(client, packet);
  }

  incomingGetPacket(client: ClientRef, packet: Packet): Promise<Packet> {
    return this.inner.incomingGetPacket(client, packet);
  }

  incomingDelPacket(client: ClientRef, packet: Packet): Promise<void> {
    return this.inner.incomingDelPacket(client, packet);
  }

  cleanIncoming(client: ClientRef): Promise<void> {
    return this.inner.cleanIncoming(client);
  }

  putWill(client: ClientRef, packet: Packet): Promise<void> {
    return this.inner.putWill(client, packet);
  }

  getWill(client: ClientRef): Promise<Packet | undefined> {
    return this.inner.getWill(client);
  }

  delWill(client: ClientRef): Promise<Packet | undefined> {
    return this.inner.delWill(client);
  }

  streamWill(brokers?: Record<string, number>): Readable {
    return this.inner.streamWill(brokers);
  }

  getClientList(topic: string): Readable {
    return this.inner.getClientList(topic);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}
