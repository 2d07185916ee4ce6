import { Notifications } from '@mantine/notifications';
import { NOTIFY_MS } from '../lib/error-handler';

/** Mantine's notification container, loaded with the first notification (see App). */
export default function NotificationsHost() {
  return <Notifications position="top-center" autoClose={NOTIFY_MS} limit={3} />;
}
