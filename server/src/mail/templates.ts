import { languageCodeOf, type TLanguageCode } from '@vdi/contracts';
import type { Mail } from './mailer';

/** The mails the portal sends, in every language with a catalogue (by the user's stored language code; hi is empty: English). */
type Texts = {
  verify: { subject: string; body: (name: string, username: string, link: string) => string };
  reset: { subject: string; body: (name: string, username: string, link: string) => string };
  changed: { subject: string; body: (name: string, username: string, newEmail: string) => string };
};

const TEXTS: Record<Exclude<TLanguageCode, 'hi'>, Texts> = {
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
  de: {
    verify: {
      subject: 'Bestätigen Sie Ihre E-Mail-Adresse',
      body: (n, u, l) => `Hallo ${n},\n\nbestätigen Sie diese Adresse für das Konto „${u}“, indem Sie innerhalb einer Stunde diesen Link öffnen:\n\n${l}\n\nWenn Sie das nicht waren, ignorieren Sie diese Nachricht.\n`,
    },
    reset: {
      subject: 'Setzen Sie Ihr Passwort zurück',
      body: (n, u, l) => `Hallo ${n},\n\njemand hat angefordert, das Passwort des Kontos „${u}“ zurückzusetzen.\nÖffnen Sie innerhalb einer Stunde diesen Link, um ein neues Passwort zu wählen:\n\n${l}\n\nWenn Sie das nicht waren, ignorieren Sie diese Nachricht.\n`,
    },
    changed: {
      subject: 'Ihre E-Mail-Adresse wird geändert',
      body: (n, u, e) => `Hallo ${n},\n\nfür das Konto „${u}“ wurde angefordert, die E-Mail-Adresse in ${e} zu ändern. Die Änderung gilt, sobald die neue Adresse bestätigt ist.\nWenn Sie das nicht waren, ändern Sie Ihr Passwort und benachrichtigen Sie Ihre Administration.\n`,
    },
  },
  eo: {
    verify: {
      subject: 'Konfirmu vian retpoŝtadreson',
      body: (n, u, l) => `Saluton ${n},\n\nKonfirmu ĉi tiun adreson por la konto „${u}“ malfermante ĉi tiun ligilon ene de unu horo:\n\n${l}\n\nSe tio ne estis vi, ignoru ĉi tiun mesaĝon.\n`,
    },
    reset: {
      subject: 'Restarigu vian pasvorton',
      body: (n, u, l) => `Saluton ${n},\n\nIu petis restarigi la pasvorton de la konto „${u}“.\nMalfermu ĉi tiun ligilon ene de unu horo por elekti novan pasvorton:\n\n${l}\n\nSe tio ne estis vi, ignoru ĉi tiun mesaĝon.\n`,
    },
    changed: {
      subject: 'Via retpoŝtadreso estas ŝanĝata',
      body: (n, u, e) => `Saluton ${n},\n\nLa konto „${u}“ petis ŝanĝi sian retpoŝtadreson al ${e}. La ŝanĝo validos, kiam la nova adreso estos konfirmita.\nSe tio ne estis vi, ŝanĝu vian pasvorton kaj sciigu vian administranton.\n`,
    },
  },
  ko: {
    verify: {
      subject: '이메일 주소를 인증하세요',
      body: (n, u, l) => `${n}님, 안녕하세요.\n\n한 시간 안에 아래 링크를 열어 "${u}" 계정의 이메일 주소를 확인하세요.\n\n${l}\n\n본인이 요청하지 않았다면 이 메시지를 무시하세요.\n`,
    },
    reset: {
      subject: '비밀번호를 재설정하세요',
      body: (n, u, l) => `${n}님, 안녕하세요.\n\n누군가 "${u}" 계정의 비밀번호 재설정을 요청했습니다.\n한 시간 안에 아래 링크를 열어 새 비밀번호를 정하세요.\n\n${l}\n\n본인이 요청하지 않았다면 이 메시지를 무시하세요.\n`,
    },
    changed: {
      subject: '이메일 주소가 변경되고 있습니다',
      body: (n, u, e) => `${n}님, 안녕하세요.\n\n"${u}" 계정에서 이메일 주소를 ${e}(으)로 변경하도록 요청했습니다. 새 주소가 인증되면 변경이 적용됩니다.\n본인이 요청하지 않았다면 비밀번호를 변경하고 관리자에게 알리세요.\n`,
    },
  },
  pl: {
    verify: {
      subject: 'Potwierdź swój adres e-mail',
      body: (n, u, l) => `Dzień dobry, ${n},\n\npotwierdź ten adres dla konta „${u}”, otwierając w ciągu godziny ten link:\n\n${l}\n\nJeśli to nie Ty, zignoruj tę wiadomość.\n`,
    },
    reset: {
      subject: 'Zresetuj swoje hasło',
      body: (n, u, l) => `Dzień dobry, ${n},\n\nktoś poprosił o zresetowanie hasła do konta „${u}”.\nOtwórz ten link w ciągu godziny, aby ustawić nowe hasło:\n\n${l}\n\nJeśli to nie Ty, zignoruj tę wiadomość.\n`,
    },
    changed: {
      subject: 'Twój adres e-mail jest zmieniany',
      body: (n, u, e) => `Dzień dobry, ${n},\n\nz konta „${u}” wysłano prośbę o zmianę adresu e-mail na ${e}. Zmiana zacznie obowiązywać po potwierdzeniu nowego adresu.\nJeśli to nie Ty, zmień hasło i powiadom administratora.\n`,
    },
  },
  ru: {
    verify: {
      subject: 'Подтвердите адрес электронной почты',
      body: (n, u, l) => `Здравствуйте, ${n}!\n\nПодтвердите этот адрес для учётной записи «${u}», открыв эту ссылку в течение часа:\n\n${l}\n\nЕсли это были не вы, просто проигнорируйте это письмо.\n`,
    },
    reset: {
      subject: 'Сброс пароля',
      body: (n, u, l) => `Здравствуйте, ${n}!\n\nКто-то запросил сброс пароля учётной записи «${u}».\nОткройте эту ссылку в течение часа, чтобы задать новый пароль:\n\n${l}\n\nЕсли это были не вы, просто проигнорируйте это письмо.\n`,
    },
    changed: {
      subject: 'Адрес электронной почты меняется',
      body: (n, u, e) => `Здравствуйте, ${n}!\n\nДля учётной записи «${u}» запрошена смена адреса электронной почты на ${e}. Изменение вступит в силу после подтверждения нового адреса.\nЕсли это были не вы, смените пароль и сообщите администратору.\n`,
    },
  },
  zh_Hans: {
    verify: {
      subject: '验证您的电子邮件地址',
      body: (n, u, l) => `${n}，您好：\n\n请在一小时内打开以下链接，为账户“${u}”确认此地址：\n\n${l}\n\n如果这不是您本人的操作，请忽略此邮件。\n`,
    },
    reset: {
      subject: '重置您的密码',
      body: (n, u, l) => `${n}，您好：\n\n有人请求重置账户“${u}”的密码。\n请在一小时内打开以下链接设置新密码：\n\n${l}\n\n如果这不是您本人的操作，请忽略此邮件。\n`,
    },
    changed: {
      subject: '您的电子邮件地址正在更改',
      body: (n, u, e) => `${n}，您好：\n\n账户“${u}”请求将电子邮件地址更改为 ${e}。新地址验证通过后，更改即生效。\n如果这不是您本人的操作，请修改密码并告知管理员。\n`,
    },
  },
};

type Person = { name: string; username: string; lang: string | null };

const textsOf = (lang: string | null): Texts => {
  const code = languageCodeOf(lang);
  return code === 'hi' ? TEXTS.en : TEXTS[code];
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
