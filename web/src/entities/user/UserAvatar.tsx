import { Avatar, type AvatarProps } from '@mantine/core';
import { avatarColor, initials } from './avatar';

/** The person's photo, else their initials on the colour their user name picks (one of 48). */
export function UserAvatar({ user, ...props }: { user: { name: string; username: string; photo: string } } & AvatarProps) {
  return (
    <Avatar src={user.photo || null} radius="xl" styles={{ placeholder: { background: avatarColor(user.username), color: 'white' } }} {...props}>
      {initials(user.name)}
    </Avatar>
  );
}
