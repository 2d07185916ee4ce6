// The <iron-remote-desktop> element the IronRDP web component registers.
import type { UserInteraction } from '@devolutions/iron-remote-desktop';

export type IronElement = HTMLElement & { module: unknown };
export type IronReadyEvent = CustomEvent<{ irgUserInteraction: UserInteraction }>;
