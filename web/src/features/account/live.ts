import { useEffect } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { TUser } from '@vdi/contracts';
import { onEvent } from '../../lib/socket';

/** Live `users_data` (e-mail verified, pending address, name) updates the profile and the header in every tab. */
export function useLiveUserData(enabled: boolean) {
  const queryClient = useQueryClient();
  useEffect(() => {
    if (!enabled) return;
    return onEvent('users_data', (d) => {
      queryClient.setQueryData<TUser>(['user'], (old) => {
        if (!old || old.id !== d.id) return old;
        return {
          ...old,
          email: d.email,
          email_verified: d.email_verified,
          ...(d.email_pending !== undefined ? { email_pending: d.email_pending } : {}),
          ...(d.name !== undefined ? { name: d.name, user_name: d.name } : {}),
        };
      });
    });
  }, [enabled, queryClient]);
}
