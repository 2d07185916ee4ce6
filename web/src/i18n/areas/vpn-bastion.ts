// The VPN and bastion area's texts (`vpn.*`, `bastion.*`, locales/vpn-bastion/): every module that
// shows them imports this one, so the screen containing it waits for them (a top-level await).
import { loadArea } from '..';

await loadArea('vpn-bastion');
