import type { Mail } from './mailer';

/** The mails the portal sends, in the five interface languages (by the user's short language code). */
type Texts = {
  verify: { subject: string; body: (name: string, username: string, link: string) => string };
  reset: { subject: string; body: (name: string, username: string, link: string) => string };
  changed: { subject: string; body: (name: string, username: string, newEmail: string) => string };
};

const TEXTS: Record<'en' | 'ca' | 'es' | 'eu' | 'fr', Texts> = {
  en: {
    verify: {
      subject: 'Verify your e-mail address',
      body: (n, u, l) => `Hello ${n},\n\nConfirm this address for the account "${u}" by opening this link within one hour:\n\n${l}\n\nIf it was not you, ignore this message.\n`,
    },
    reset: {
      subject: 'Reset your password',
      body: (n, u, l) => `Hello ${n},\n\nSomeone asked to reset the password of the account "${u}".\nOpen this link within one hour to choose a new password:\n\n${l}\n\nIf it was not you, ignore this message.\n`,
    },
    changed: {
      subject: 'Your e-mail address is being changed',
      body: (n, u, e) => `Hello ${n},\n\nThe account "${u}" asked to change its e-mail address to ${e}. The change applies once the new address is verified.\nIf it was not you, change your password and tell your administrator.\n`,
    },
  },
  ca: {
    verify: {
      subject: 'Verifiqueu la vostra adreça electrònica',
      body: (n, u, l) => `Hola ${n},\n\nConfirmeu aquesta adreça per al compte "${u}" obrint aquest enllaç en el termini d'una hora:\n\n${l}\n\nSi no heu estat vosaltres, ignoreu aquest missatge.\n`,
    },
    reset: {
      subject: 'Restabliu la contrasenya',
      body: (n, u, l) => `Hola ${n},\n\nAlgú ha demanat restablir la contrasenya del compte "${u}".\nObriu aquest enllaç en el termini d'una hora per triar-ne una de nova:\n\n${l}\n\nSi no heu estat vosaltres, ignoreu aquest missatge.\n`,
    },
    changed: {
      subject: "S'està canviant la vostra adreça electrònica",
      body: (n, u, e) => `Hola ${n},\n\nEl compte "${u}" ha demanat canviar l'adreça electrònica a ${e}. El canvi s'aplicarà quan es verifiqui la nova adreça.\nSi no heu estat vosaltres, canvieu la contrasenya i aviseu l'administrador.\n`,
    },
  },
  es: {
    verify: {
      subject: 'Verifique su dirección de correo',
      body: (n, u, l) => `Hola ${n},\n\nConfirme esta dirección para la cuenta "${u}" abriendo este enlace en el plazo de una hora:\n\n${l}\n\nSi no ha sido usted, ignore este mensaje.\n`,
    },
    reset: {
      subject: 'Restablezca su contraseña',
      body: (n, u, l) => `Hola ${n},\n\nAlguien ha pedido restablecer la contraseña de la cuenta "${u}".\nAbra este enlace en el plazo de una hora para elegir una nueva:\n\n${l}\n\nSi no ha sido usted, ignore este mensaje.\n`,
    },
    changed: {
      subject: 'Se está cambiando su dirección de correo',
      body: (n, u, e) => `Hola ${n},\n\nLa cuenta "${u}" ha pedido cambiar su dirección de correo a ${e}. El cambio se aplicará cuando se verifique la nueva dirección.\nSi no ha sido usted, cambie su contraseña y avise a su administrador.\n`,
    },
  },
  eu: {
    verify: {
      subject: 'Egiaztatu zure helbide elektronikoa',
      body: (n, u, l) => `Kaixo ${n},\n\nBaieztatu helbide hau "${u}" konturako esteka hau ordubete barru irekiz:\n\n${l}\n\nZu izan ez bazara, ez egin kasurik mezu honi.\n`,
    },
    reset: {
      subject: 'Berrezarri zure pasahitza',
      body: (n, u, l) => `Kaixo ${n},\n\nNorbaitek "${u}" kontuaren pasahitza berrezartzeko eskatu du.\nIreki esteka hau ordubete barru pasahitz berri bat aukeratzeko:\n\n${l}\n\nZu izan ez bazara, ez egin kasurik mezu honi.\n`,
    },
    changed: {
      subject: 'Zure helbide elektronikoa aldatzen ari da',
      body: (n, u, e) => `Kaixo ${n},\n\n"${u}" kontuak helbide elektronikoa ${e} helbidera aldatzeko eskatu du. Aldaketa helbide berria egiaztatzen denean aplikatuko da.\nZu izan ez bazara, aldatu pasahitza eta jakinarazi administratzaileari.\n`,
    },
  },
  fr: {
    verify: {
      subject: 'Vérifiez votre adresse e-mail',
      body: (n, u, l) => `Bonjour ${n},\n\nConfirmez cette adresse pour le compte « ${u} » en ouvrant ce lien dans l'heure :\n\n${l}\n\nSi ce n'était pas vous, ignorez ce message.\n`,
    },
    reset: {
      subject: 'Réinitialisez votre mot de passe',
      body: (n, u, l) => `Bonjour ${n},\n\nQuelqu'un a demandé la réinitialisation du mot de passe du compte « ${u} ».\nOuvrez ce lien dans l'heure pour en choisir un nouveau :\n\n${l}\n\nSi ce n'était pas vous, ignorez ce message.\n`,
    },
    changed: {
      subject: 'Votre adresse e-mail est en cours de modification',
      body: (n, u, e) => `Bonjour ${n},\n\nLe compte « ${u} » a demandé à changer son adresse e-mail pour ${e}. Le changement s'appliquera une fois la nouvelle adresse vérifiée.\nSi ce n'était pas vous, changez votre mot de passe et prévenez votre administrateur.\n`,
    },
  },
};

type Person = { name: string; username: string; lang: string | null };

const textsOf = (lang: string | null): Texts => {
  const short = (lang ?? 'en').slice(0, 2).toLowerCase();
  return Object.hasOwn(TEXTS, short) ? TEXTS[short as keyof typeof TEXTS] : TEXTS.en;
};

export const verificationMail = (user: Person, to: string, link: string): Mail => {
  const t = textsOf(user.lang).verify;
  return { to, subject: t.subject, text: t.body(user.name, user.username, link) };
};

export const resetMail = (user: Person, to: string, link: string): Mail => {
  const t = textsOf(user.lang).reset;
  return { to, subject: t.subject, text: t.body(user.name, user.username, link) };
};

export const emailChangeNotice = (user: Person, to: string, newEmail: string): Mail => {
  const t = textsOf(user.lang).changed;
  return { to, subject: t.subject, text: t.body(user.name, user.username, newEmail) };
};
